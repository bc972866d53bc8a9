// One autocannon run of rig reports, started by bench/report-tail.ts inside a rig network namespace
// (so the load generator never shares the server's event loop or its address). Prints one JSON line.
// argv: url host connections (duration_s | "n" + amount) rigs. SIGTERM ends a timed run early (the
// bench stops the load when the activity it measures is over); the result covers the run until then.
import autocannon from 'autocannon';
import { loadRun } from './run.ts';

const [url, host, connections, length, rigs] = process.argv.slice(2);
if (!url || !host || !connections || !length || !rigs) throw new Error('usage: load.ts URL HOST CONNECTIONS DURATION_S|nAMOUNT RIGS');
const BODY = 'rig_serial=SN-0042&gpsd_latitude=47.376887&gpsd_longitude=8.541694&local_ip=192.168.8.20&software_version=3.1.0&git_branch=main';
let n = 0;
const cpu0 = process.cpuUsage();
const result = await new Promise<autocannon.Result>((resolve, reject) => {
  const instance = autocannon({
  url,
  connections: Number(connections),
  ...(length.startsWith('n') ? { amount: Number(length.slice(1)) } : { duration: Number(length) }),
  method: 'PUT',
  headers: { host, 'content-type': 'application/x-www-form-urlencoded' },
  body: BODY,
  // Rig report clients give up after a few seconds.
  timeout: 10,
  requests: [
    {
      setupRequest: (req) => {
        req.path = `/api/v1/rigs/rig${n++ % Number(rigs)}`;
        return req;
      },
    },
  ],
  }, (err, r) => (err ? reject(err) : resolve(r)));
  process.once('SIGTERM', () => instance.stop());
});
const cpu = process.cpuUsage(cpu0);
process.stdout.write(`${JSON.stringify(loadRun(result, (cpu.user + cpu.system) / 1000))}\n`);
