// Rigs reporting on their own rhythm from inside a network namespace (one process for many rigs):
//   node reporter.mjs http://GW:PORT '[{"id":"rig1","addr":"10.144.36.2","everyMs":1000}]'
// stdin lines "stop ID" / "start ID" stop and resume a rig; stdout: "ID STATUS" per answer.
import http from 'node:http';
import readline from 'node:readline';

const [base, spec] = process.argv.slice(2);
const rigs = new Map(JSON.parse(spec).map((r) => [r.id, r]));
const timers = new Map();

function report(r) {
  const req = http.request(`${base}/api/v1/rigs/${r.id}`, {
    method: 'PUT',
    localAddress: r.addr,
    headers: { host: 'vpn.rigs.internal', 'content-type': 'application/x-www-form-urlencoded' },
  });
  req.on('response', (res) => {
    res.resume();
    res.on('end', () => process.stdout.write(`${r.id} ${res.statusCode}\n`));
  });
  req.on('error', (e) => process.stdout.write(`${r.id} error ${e.code}\n`));
  req.end(`rig_serial=S-${r.id}&software_version=2.1.0&git_branch=main&gpsd_latitude=52.52&gpsd_longitude=13.405`);
}

function start(id) {
  const r = rigs.get(id);
  if (!r || timers.has(id)) return;
  report(r);
  timers.set(id, setInterval(() => report(r), r.everyMs));
}

function stop(id) {
  clearInterval(timers.get(id));
  timers.delete(id);
}

for (const r of rigs.values()) if (!r.paused) start(r.id);
readline.createInterface({ input: process.stdin }).on('line', (line) => {
  const [cmd, id] = line.trim().split(/\s+/);
  if (cmd === 'stop') stop(id);
  else if (cmd === 'start') start(id);
  process.stdout.write(`ack ${cmd} ${id}\n`);
});
process.stdin.on('end', () => process.exit(0));
