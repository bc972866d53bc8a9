import { DEDICATED_CONNECTIONS } from '../../db/dialect/postgres/connection.ts';
import type { ServerProbe } from '../../db/diagnostics/server-database.ts';
import { fail, ok, warn, type Finding } from './finding.ts';

/** Connections kept free for CLI commands (each holds one or two while it runs) and a doctor. */
export const CLI_CONNECTIONS = 5;

/** What one `rigd serve` may hold at most: its pool and its dedicated connections. */
export function perNode(poolMax: number): number {
  return poolMax + DEDICATED_CONNECTIONS;
}

/** Nodes `max_connections` (less the superuser reserve) has room for, with CLI_CONNECTIONS kept free. */
export function nodesThatFit(available: number, poolMax: number): number {
  return Math.max(0, Math.floor((available - CLI_CONNECTIONS) / perNode(poolMax)));
}

/**
 * database.pool_max against the server's max_connections: each node holds up to pool_max + 3
 * connections, so N nodes need N x (pool_max + 3) + 5 of what is left after
 * superuser_reserved_connections. Fails when one node does not fit, warns when the nodes heard from
 * in the last hour (at least one) do not.
 */
export async function checkConnectionBudget(probe: ServerProbe, poolMax: number): Promise<Finding> {
  const limits = await probe.connectionLimits();
  const max = limits.max;
  const available = max - limits.reserved;
  const nodes = Math.max(1, (await probe.nodesLastHour()) ?? 0);
  const need = nodes * perNode(poolMax) + CLI_CONNECTIONS;
  const text = `${nodes} node(s) x (pool_max ${poolMax} + ${DEDICATED_CONNECTIONS} dedicated) + ${CLI_CONNECTIONS} for commands = ${need} connections; the server takes ${available} (max_connections ${max} less the superuser reserve)`;
  const fix = `lower database.pool_max (at most ${Math.max(1, Math.floor((available - CLI_CONNECTIONS) / nodes) - DEDICATED_CONNECTIONS)} for ${nodes} node(s)) or raise max_connections on the server`;
  if (perNode(poolMax) + CLI_CONNECTIONS > available) return fail('connections', text, fix);
  if (need > available) return warn('connections', text, fix);
  return ok('connections', `${text}: room for ${nodesThatFit(available, poolMax)} node(s)`);
}

/**
 * Whether database.url reaches the server through something in between (a pooler such as PgBouncer,
 * or a proxy): the server sees this connection come from another TCP port than the one it left
 * from. Without database.direct_url, a transaction-mode pooler there would lose LISTEN and let two
 * nodes hold the duties lock: a warn naming database.direct_url. Null when it cannot tell (a Unix
 * socket, or this end's port unknown) or when direct_url is set.
 */
export async function checkPooler(probe: ServerProbe, directUrl: string): Promise<Finding | null> {
  if (directUrl) return null;
  const seen = await probe.clientPortSeen();
  const local = probe.localPort;
  if (seen === null || local === undefined || seen === local) return null;
  return warn(
    'pooler',
    `database.url reaches the server through a pooler or proxy (the server sees port ${seen}, this end is ${local}) and database.direct_url is empty`,
    'if it is PgBouncer in transaction mode, set database.direct_url to the server itself: LISTEN, the duties lock, migrations and the capture store need a session',
  );
}
