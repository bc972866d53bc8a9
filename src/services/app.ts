import type { Config } from '../config/schema.ts';
import { openDatabase, type Database } from '../db/index.ts';
import { LoginThrottle } from './login-throttle.ts';
import { Passwords } from './passwords.ts';
import { RigService } from './rigs.ts';
import { SessionService } from './sessions.ts';
import { UserService } from './users.ts';

/** Everything a front end (the HTTP server or a CLI command) works through. */
export interface App {
  config: Readonly<Config>;
  db: Database;
  users: UserService;
  sessions: SessionService;
  rigs: RigService;
  /** Stops background work, waits for queued writes, closes the database. */
  close(): Promise<void>;
}

/** Opens the database in config.data_dir (creating and migrating it) and builds the services. */
export async function openApp(config: Readonly<Config>): Promise<App> {
  const db = await openDatabase(config.data_dir);
  const passwords = new Passwords(config.auth.bcrypt_cost);
  const users = new UserService(db, passwords);
  const throttle = new LoginThrottle({
    perLogin: config.auth.max_failures_per_login,
    perClient: config.auth.max_failures_per_client,
    windowMs: config.auth.failure_window_s * 1000,
  });
  const sessions = new SessionService(db, users, passwords, throttle, config.auth.token_ttl_days * 86_400_000);
  const rigs = new RigService(db, config);
  return {
    config,
    db,
    users,
    sessions,
    rigs,
    close: () => db.close(),
  };
}
