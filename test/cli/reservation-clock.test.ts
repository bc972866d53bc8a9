// test: alone (reservation expiry judged against the clock within bounds)
// Upload reservations by one clock, for real: rigd serve run under libfaketime (LD_PRELOAD), its
// clock an hour ahead while the database keeps its own. PostgreSQL: a reservation made there stores
// its times (reserved at, URL expiry) from the database's clock, the embedded store takes the upload
// at once (it judges the expiry by that clock too), and the monitor expires an unused reservation
// once the database's clock passes its expiry: not an hour early by the node's clock. SQLite: the
// node's clock is the only clock, as before. The signed URL's X-Amz-Date is the node's clock on both
// (SigV4), valid for the same TTL. Every acknowledged reservation is there once, in its state.
import { existsSync } from 'node:fs';
import test from 'tape';
import { QueryTypes } from 'sequelize';
import { openDatabase } from '../../src/db/index.ts';
import { freePort, serveProcess, type ServeProcess } from '../helpers/serve-process.ts';
import { onPostgres, withDb } from '../helpers/dialect.ts';
import { waitFor } from '../helpers/jobs.ts';
import { createHosts, type Hosts } from '../helpers/netns.ts';
import { tmpDir } from '../helpers/tmp.ts';

const RIG = { name: 'rig', addr: '10.144.100.2', gw: '10.144.100.1' };
const LIBFAKETIME = '/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1';
const SHIFT = '+1h';
const SHIFT_MS = 3_600_000;
const TTL_S = 20;
/** Slack for "within a few seconds" of a clock reading taken around a request. */
const SLACK_MS = 3000;


interface Stored {
  state: string;
  createdAt: number;
  expiresAt: number;
  updatedAt: number;
  /** The database's now() when read (SQLite: the node's clock, this clock shifted). */
  now: number;
}

/**
 * The reservations of `key` as stored, with the database's clock read just after them: a state read
 * is never later than that now (read before them, an expiry between the two reads would look early).
 */
async function stored(dataDir: string, key: string): Promise<Stored[]> {
  const db = await openDatabase(...withDb(dataDir));
  try {
    const rows = await db.models.Upload.findAll({ where: { key }, order: [['id', 'ASC']] });
    const now = onPostgres
      ? new Date((await db.sequelize.query<{ now: Date }>('SELECT now() AS now', { type: QueryTypes.SELECT }))[0]!.now).getTime()
      : Date.now() + SHIFT_MS;
    return rows.map((r) => ({
      state: r.state,
      createdAt: new Date(r.created_at).getTime(),
      expiresAt: new Date(r.url_expires_at).getTime(),
      updatedAt: new Date(r.updated_at).getTime(),
      now,
    }));
  } finally {
    await db.close();
  }
}

/** Now by the clock reservations must be stored by: the database's on PostgreSQL, the node's on SQLite. */
async function reservationClock(dataDir: string): Promise<number> {
  if (!onPostgres) return Date.now() + SHIFT_MS;
  const db = await openDatabase(...withDb(dataDir));
  try {
    const [row] = await db.sequelize.query<{ now: Date }>('SELECT now() AS now', { type: QueryTypes.SELECT });
    return new Date(row!.now).getTime();
  } finally {
    await db.close();
  }
}

const iso = (ms: number) => new Date(ms).toISOString();

test(`a node whose clock is ${SHIFT} ahead: reservations expire by the database's clock on PostgreSQL, by the node's on SQLite`, async (t) => {
  t.ok(existsSync(LIBFAKETIME), `libfaketime is installed (${LIBFAKETIME})`);
  const dataDir = tmpDir();
  const port = await freePort();
  const base = `http://${RIG.gw}:${port}`;
  const env = {
    RIGD_DATA_DIR: dataDir,
    RIGD_STORAGE_PUBLIC_URL: base,
    RIGD_STORAGE_UPLOAD_URL_TTL: String(TTL_S),
    RIGD_CLUSTER_HEARTBEAT_S: '1',
    LD_PRELOAD: LIBFAKETIME,
    FAKETIME: SHIFT,
    FAKETIME_DONT_FAKE_MONOTONIC: '1',
    FAKETIME_DONT_RESET: '1',
  };
  const rigHeaders = { host: `${RIG.gw}:${port}` };
  let hosts: Hosts | undefined;
  let server: ServeProcess | undefined;
  try {
    hosts = await createHosts([RIG]);
    const h = hosts;
    server = await serveProcess(env, ['--port', String(port), '--host', '0.0.0.0']);
    const reserve = async (key: string) => {
      const before = await reservationClock(dataDir);
      const res = await h.request('rig', { url: `${base}/api/v1/rigs/upload?key=${encodeURIComponent(key)}&size=100`, headers: rigHeaders });
      const after = await reservationClock(dataDir);
      const signedBefore = Date.now() + SHIFT_MS;
      return { res, before, after, signedBefore };
    };
    const put = (url: string) => h.request('rig', { url, method: 'PUT', headers: rigHeaders, body: Buffer.alloc(100, 7) });

    // A reservation, stored by the reservation clock; its URL signed by the node's.
    const a = await reserve('clk/a.sqlite');
    t.equal(a.res.status, 200, `reservation a acknowledged (${a.res.body.slice(0, 200)})`);
    const [ra] = await stored(dataDir, 'clk/a.sqlite');
    const clock = onPostgres ? "the database's clock" : "the node's clock (SQLite: the only clock)";
    t.ok(ra && ra.createdAt >= a.before - SLACK_MS && ra.createdAt <= a.after + SLACK_MS, `reserved at by ${clock} (${iso(ra!.createdAt)}, reserve between ${iso(a.before)} and ${iso(a.after)})`);
    t.ok(
      ra && ra.expiresAt >= a.before + TTL_S * 1000 - SLACK_MS && ra.expiresAt <= a.after + TTL_S * 1000 + SLACK_MS,
      `URL expiry stored by ${clock} + ${TTL_S} s (${iso(ra!.expiresAt)})`,
    );
    const url = new URL(JSON.parse(a.res.body).url as string);
    const amzDate = url.searchParams.get('X-Amz-Date')!;
    const signedAt = Date.UTC(+amzDate.slice(0, 4), +amzDate.slice(4, 6) - 1, +amzDate.slice(6, 8), +amzDate.slice(9, 11), +amzDate.slice(11, 13), +amzDate.slice(13, 15));
    t.ok(signedAt >= a.signedBefore - 60_000 && signedAt <= Date.now() + SHIFT_MS + SLACK_MS, `X-Amz-Date is the node's clock, ${SHIFT} ahead (${amzDate})`);
    t.equal(url.searchParams.get('X-Amz-Expires'), String(TTL_S), 'X-Amz-Expires is the same TTL as the stored expiry');

    // The embedded store judges the reservation unexpired by the clock its expiry was stored by.
    const upA = await put(url.toString());
    t.equal(upA.status, 200, `the upload through reservation a's URL is taken at once (${upA.status} ${upA.body.slice(0, 200)})`);

    // An unused reservation: the monitor expires it when that clock passes its expiry, not before.
    const b = await reserve('clk/b.sqlite');
    t.equal(b.res.status, 200, 'reservation b acknowledged');
    const early: string[] = [];
    const expired = await waitFor(
      async () => {
        const [rb] = await stored(dataDir, 'clk/b.sqlite');
        if (rb && rb.state === 'expired' && rb.now < rb.expiresAt) early.push(`expired, read at ${iso(rb.now)} before its expiry ${iso(rb.expiresAt)}`);
        return rb && rb.state !== 'reserved' ? rb : null;
      },
      TTL_S * 1000 + 120_000,
      'reservation b expired by the monitor',
      250,
    );
    t.equal(expired.state, 'expired', 'the monitor expired reservation b');
    t.deepEqual(early, [], 'never seen expired while the reservation clock was before its expiry');
    t.ok(expired.updatedAt >= expired.expiresAt, `expired at ${iso(expired.updatedAt)} by ${clock}, not before its expiry ${iso(expired.expiresAt)}`);
    t.ok(expired.updatedAt < expired.expiresAt + SHIFT_MS / 2, `and not by a clock ${SHIFT} away from it`);
    const late = await put(new URL(JSON.parse(b.res.body).url as string).toString());
    t.equal(late.status, 403, `an upload through the expired reservation's URL is refused (${late.status})`);

    t.equal(await server.stop('SIGTERM'), 0, 'stopped');
    const [fa] = await stored(dataDir, 'clk/a.sqlite');
    const bs = await stored(dataDir, 'clk/b.sqlite');
    t.equal(fa?.state, 'uploaded', 'reservation a is there once, uploaded');
    t.deepEqual(bs.map((r) => r.state), ['expired'], 'reservation b is there once, expired');
  } catch (err) {
    t.fail(`${(err as Error).stack}\n${server?.output().slice(-3000) ?? ''}`);
  } finally {
    if (server && server.child.exitCode === null) await server.stop('SIGKILL');
    await hosts?.destroy();
  }
});
