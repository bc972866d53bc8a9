// The rigs of bench/login-storm.ts, in a process of their own inside a rig network namespace:
// CLIENTS rigs, each reporting again as soon as answered (undici), until SIGTERM or DURATION_S
// seconds; then one JSON line with the phase's figures (count, failures, p50/p99/max, seconds).
// argv: url host clients duration_s|"until-term" rigs.
import { request } from 'undici';

const [url, host, clients, length, rigs] = process.argv.slice(2);
if (!url || !host || !clients || !length || !rigs) throw new Error('usage: reporter.ts URL HOST CLIENTS DURATION_S|until-term RIGS');
const BODY = 'rig_serial=SN-0042&gpsd_latitude=47.376887&gpsd_longitude=8.541694&local_ip=192.168.8.20&software_version=3.1.0&git_branch=main';
const quantile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;

let stop = false;
process.once('SIGTERM', () => (stop = true));
if (length !== 'until-term') setTimeout(() => (stop = true), Number(length) * 1000);
// Ready: the parent starts what the phase measures only once the rigs are reporting.
process.stderr.write('reporting\n');

const latencies: number[] = [];
let failed = 0;
let n = 0;
const started = performance.now();
await Promise.all(
  Array.from({ length: Number(clients) }, async () => {
    while (!stop) {
      const t0 = performance.now();
      try {
        const res = await request(`${url}/api/v1/rigs/rig${n++ % Number(rigs)}`, {
          method: 'PUT',
          headers: { host, 'content-type': 'application/x-www-form-urlencoded' },
          body: BODY,
        });
        await res.body.text();
        if (res.statusCode !== 200) failed++;
      } catch {
        // A connection closed under the request (a keep-alive socket the server let go): a failure.
        failed++;
      }
      latencies.push(performance.now() - t0);
    }
  }),
);
const sorted = latencies.sort((a, b) => a - b);
process.stdout.write(
  `${JSON.stringify({ reports: sorted.length, failed, p50: quantile(sorted, 0.5), p99: quantile(sorted, 0.99), max: sorted[sorted.length - 1] ?? 0, seconds: (performance.now() - started) / 1000 })}\n`,
);
process.exit(0);
