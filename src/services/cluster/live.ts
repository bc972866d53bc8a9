/** A node is live while its last heartbeat is younger than this many heartbeat periods (cluster.heartbeat_s). */
export const LIVE_HEARTBEATS = 3;
