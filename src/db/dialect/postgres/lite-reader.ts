import { MIGRATION_NAMES } from '../../migrations/names.ts';
import type { LiteReader } from '../../reader.ts';
import { redactText } from '../../database-url.ts';
import { postgresOpenError } from './open-error.ts';

/** `?` placeholders (outside quoted text) as PostgreSQL's $1, $2, ... */
export function numberedPlaceholders(sql: string): string {
  let n = 0;
  let out = '';
  let quote: string | null = null;
  for (const ch of sql) {
    if (quote) {
      if (ch === quote) quote = null;
    } else if (ch === "'" || ch === '"') quote = ch;
    else if (ch === '?') {
      out += `$${++n}`;
      continue;
    }
    out += ch;
  }
  return out;
}

/**
 * A direct pg connection to the database url names, for reading, or null when it is not at the latest
 * migration (then the caller opens it fully, which migrates it). Loads no Sequelize.
 */
export async function openLiteReader(_dataDir: string, url?: string): Promise<LiteReader | null> {
  if (!url) throw new TypeError('the postgres lite reader needs database.url');
  const { default: pg } = await import('pg');
  pg.types.setTypeParser(pg.types.builtins.INT8, (v) => Number(v));
  pg.types.setTypeParser(pg.types.builtins.NUMERIC, (v) => Number(v));
  const client = new pg.Client({ connectionString: url, application_name: 'rigd', connectionTimeoutMillis: 10_000 });
  try {
    await client.connect();
  } catch (err) {
    await client.end().catch(() => undefined);
    throw postgresOpenError(url, err) ?? new Error(redactText(String((err as Error)?.message ?? err)));
  }
  // One client runs one query at a time: callers may start several at once (Promise.all), so they
  // queue here instead of in pg's deprecated internal queue.
  let last: Promise<unknown> = Promise.resolve();
  const reader: LiteReader = {
    engine: 'postgres',
    all: <T>(sql: string, params: unknown[] = []) => {
      const run = last.then(async () => (await client.query(numberedPlaceholders(sql), params)).rows as T[]);
      last = run.catch(() => undefined);
      return run;
    },
    close: () => client.end(),
  };
  try {
    const applied = await reader.all<{ name: string }>('SELECT name FROM schema_migrations');
    const done = new Set(applied.map((r) => r.name));
    if (MIGRATION_NAMES.every((n) => done.has(n))) return reader;
  } catch {
    // No migrations table yet: a database that was never migrated.
  }
  await reader.close();
  return null;
}
