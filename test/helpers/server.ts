import type { Server } from '@hapi/hapi';
import { loadConfig } from '../../src/config/load.ts';
import type { Config } from '../../src/config/schema.ts';
import { isPostgresUrl } from '../../src/db/database-url.ts';
import { silentLogger } from '../../src/log.ts';
import { createServer } from '../../src/server/server.ts';
import { openApp, type App } from '../../src/services/app.ts';
import { databaseUrlFor } from './dialect.ts';
import { tmpDir } from './tmp.ts';

export interface TestServer {
  app: App;
  server: Server;
  /** http://127.0.0.1:PORT */
  url: string;
  config: Readonly<Config>;
  close(): Promise<void>;
}

type DeepPartial<T> = { [K in keyof T]?: T[K] extends object ? (T[K] extends unknown[] ? T[K] : DeepPartial<T[K]>) : T[K] };

/** Test defaults: a fresh data_dir and a cheap bcrypt cost (hashing is not what tests measure). */
export function testConfig(overrides: DeepPartial<Config> = {}): Readonly<Config> {
  const { auth, ...rest } = overrides;
  const dataDir = rest.data_dir ?? tmpDir();
  const url = rest.database?.url ?? databaseUrlFor(dataDir);
  return loadConfig({
    env: {},
    // database.url: under npm run test:pg, the data_dir's own PostgreSQL database; there the
    // embedded store is allowed for one node only (cluster.single_node, as test/run.mjs sets).
    overrides: {
      database: { url },
      ...rest,
      cluster: { single_node: isPostgresUrl(url), ...rest.cluster },
      data_dir: dataDir,
      auth: { bcrypt_cost: 4, ...auth },
    } as Record<string, unknown>,
  }).config;
}

/** The real server on a real socket (host defaults to 127.0.0.1, port to a free one). */
export async function startServer(overrides: DeepPartial<Config> = {}, listen: { host?: string; port?: number } = {}): Promise<TestServer> {
  const config = testConfig(overrides);
  const app = await openApp(config);
  const server = await createServer(app, { host: listen.host ?? '127.0.0.1', port: listen.port ?? 0, log: silentLogger });
  await app.start();
  await server.start();
  const host = listen.host && listen.host !== '::' && listen.host !== '0.0.0.0' ? listen.host : '127.0.0.1';
  return {
    app,
    server,
    config,
    url: `http://${host}:${server.info.port}`,
    async close() {
      await server.stop({ timeout: 2000 });
      await app.close();
    },
  };
}

/** Adds a user and logs in; returns the token and the user's id. */
export async function userWithToken(
  t: TestServer,
  username: string,
  opts: { admin?: boolean; password?: string } = {},
): Promise<{ id: string; token: string; password: string }> {
  const password = opts.password ?? `${username}-password`;
  const user = await t.app.users.create({ username, email: `${username}@example.com`, password, admin: opts.admin });
  const { token } = await t.app.sessions.login(username, password, '127.0.0.1');
  return { id: user.id, token, password };
}
