import { randomBytes } from 'node:crypto';

/**
 * This process's run: one per process (two apps in one process, as tests run them, are one node).
 * The node registry keeps it with the node's row (src/db/nodes.ts); the cluster duties session
 * carries it in its name, so that `rigd doctor` can tell which node holds the duties.
 */
export const RUN_ID = randomBytes(12).toString('hex');
