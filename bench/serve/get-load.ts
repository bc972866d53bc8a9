// One autocannon run of GETs, started inside a rig network namespace (bench/serve/load.ts getLoadRun),
// so the load generator shares neither the server's event loop nor its address. Each request's path
// is PATH with "{n}" replaced by a counter (distinct keys). Prints one JSON line (bench/tail/run.ts).
// argv: url host connections duration_s path.
import autocannon from 'autocannon';
import { loadRun } from '../tail/run.ts';

const [url, host, connections, duration, template] = process.argv.slice(2);
if (!url || !host || !connections || !duration || !template) throw new Error('usage: get-load.ts URL HOST CONNECTIONS DURATION_S PATH');
let n = 0;
const result = await autocannon({
  url,
  connections: Number(connections),
  duration: Number(duration),
  headers: { host },
  timeout: 10,
  requests: [
    {
      setupRequest: (req) => {
        req.path = template.replaceAll('{n}', String(n++));
        return req;
      },
    },
  ],
});
process.stdout.write(`${JSON.stringify(loadRun(result))}\n`);
