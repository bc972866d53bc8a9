import { hostname } from 'node:os';
import type { Config } from '../../config/schema.ts';

/**
 * This node's name among the nodes sharing one database: cluster.instance_id, or
 * "<hostname>:<port>" when it is empty (port: the one the server listens on, config's by default).
 */
export function instanceId(config: Pick<Config, 'cluster' | 'server'>, port: number = config.server.port): string {
  return config.cluster.instance_id || `${hostname()}:${port}`;
}
