// Times every statement node-sqlite3 runs in the process it is loaded into: when it was handed to the
// driver and when its callback ran (ms since the probe loaded), with the head of its SQL. For the
// report path's batch cycle (docs/perf/report-path.md#a-batchs-cycle-measured):
//   BENCH_NODE_FLAGS="--import ./bench/serve/statement-probe.mjs" BENCH_RIGD_ENV="STATEMENT_PROBE_OUT=/tmp/st.json" \
//     node --import tsx bench/report-tail.ts
//   node --import tsx bench/serve/statement-summary.ts /tmp/st.json
// The records are written when the process exits (the last 200,000). Only for measuring: it wraps
// Database#run/all/get/exec of the sqlite3 module rigd loads.
import { writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';

const sqlite3 = createRequire(import.meta.url)('sqlite3');
const out = process.env.STATEMENT_PROBE_OUT ?? path.join(tmpdir(), `statements.${process.pid}.json`);
const KEEP = 200_000;
const records = [];
const t0 = process.hrtime.bigint();
const now = () => Number(process.hrtime.bigint() - t0) / 1e6;

for (const method of ['run', 'all', 'get', 'exec']) {
  const original = sqlite3.Database.prototype[method];
  sqlite3.Database.prototype[method] = function (sql, ...args) {
    const record = [now(), null, String(sql).slice(0, 40).replace(/\s+/g, ' ')];
    records.push(record);
    if (records.length > 2 * KEEP) records.splice(0, KEEP);
    const last = args.length - 1;
    if (typeof args[last] === 'function') {
      const callback = args[last];
      args[last] = function (...answer) {
        record[1] = now();
        return callback.apply(this, answer);
      };
    }
    return original.call(this, sql, ...args);
  };
}

process.on('exit', () => writeFileSync(out, JSON.stringify(records.slice(-KEEP))));
