/** What an incident check says holds now (a Condition) and what it reads to say it (a CheckContext). */
import type { Config } from '../../config/schema.ts';
import type { Reader } from '../../db/reader.ts';
import type { IncidentKind } from './event.ts';

export interface Condition {
  kind: IncidentKind;
  subject: string | null;
  details: Record<string, unknown>;
  /** The line of the opened event. */
  text: string;
  /** The rig concerned, if any. */
  rig?: string;
  /** An open incident of this pair takes the condition's details and text as they change (no notification). */
  refresh?: boolean;
}

export interface CheckContext {
  reader: Reader;
  config: Pick<Config, 'alerts' | 'server' | 'data_dir' | 'cluster'>;
  now: Date;
  /** This node's name (disk_low is about the disk of the node that sweeps). */
  instance: string;
  /** Subjects of the open capture_failed incidents (still failed: they stay open). */
  openFailed: string[];
  /** Since when this node has written the database without a break (null: no break seen): no node could heartbeat before. */
  writableSince?: Date | null;
  /** Subjects of the open node_down incidents (they stay open until the node's heartbeat is back). */
  openDown?: string[];
  /** An ingest_backlog incident is open (it stays open while the backlog is older than alerts.backlog_s, outage or not). */
  backlogOpen?: boolean;
}
