// rigd doctor's database check on PostgreSQL: connects, version, migrations, privileges; the URL's
// password is never in a finding.
import net from 'node:net';
import test from 'tape';
import { openDatabase } from '../../../src/db/index.ts';
import { checkPostgresDatabase } from '../../../src/services/doctor/database-postgres.ts';
import { postgresOnly } from '../../helpers/dialect.ts';
import { testConfig } from '../../helpers/server.ts';

const PASSWORD = 'Hunter2-doctor';

function closedPort(): Promise<number> {
  return new Promise((resolve) => {
    const srv = net.createServer();
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

test('an unreachable server: fail, naming it with the password masked', async (t) => {
  const port = await closedPort();
  const [finding] = await checkPostgresDatabase(`postgres://rigd:${PASSWORD}@127.0.0.1:${port}/rigd`);
  t.equal(finding?.status, 'fail');
  t.equal(finding?.message, `cannot open the database postgres://rigd:***@127.0.0.1:${port}/rigd: connection refused (ECONNREFUSED)`);
  t.notOk(JSON.stringify(finding).includes(PASSWORD), 'no password anywhere in the finding');
});

test('a migrated database: ok, with the server version; before migrating: pending migrations', async (t) => {
  if (postgresOnly(t, 'checks a PostgreSQL server')) return;
  const config = testConfig();
  const [before] = await checkPostgresDatabase(config.database.url);
  t.equal(before?.status, 'warn', 'an empty database: migrations pending');
  t.match(before?.message ?? '', /migration\(s\) pending/);
  const db = await openDatabase(config.data_dir, { url: config.database.url });
  await db.close();
  const [after] = await checkPostgresDatabase(config.database.url);
  t.equal(after?.status, 'ok', after?.message);
  t.match(after?.message ?? '', /\(PostgreSQL \d+\.\d+.*\) connects, \d+ migrations applied, none pending, privileges ok/);
});
