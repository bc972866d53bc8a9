/** The alerts section: offline by each rig's rhythm and the incident checks (src/services/alerts). */
import Joi from 'joi';

const positiveInt = Joi.number().integer().min(1);

export interface AlertsConfig {
  /** A rig with a learned rhythm is offline after this many of its intervals without a report. */
  missed_reports: number;
  /** A rig is never judged offline by its rhythm sooner than this many seconds of silence. */
  min_silence_s: number;
  /** More than this share of the online rigs silent within one interval: one fleet_outage incident. */
  outage_share: number;
  /** Seconds between repeats of an open, unacknowledged incident; 0: no repeats. */
  repeat_s: number;
  /** The oldest queued capture waiting longer than this many seconds: an ingest_backlog incident. */
  backlog_s: number;
  /** Seconds between two sweeps of the incident checks (on the node holding the cluster duties). */
  check_interval_s: number;
  /** A rig going offline and back more than this many times an hour keeps one open incident. */
  flaps_per_hour: number;
}

export const alertsSchema = Joi.object({
  missed_reports: Joi.number().min(1.5).max(1000).default(3),
  min_silence_s: positiveInt.max(30 * 86400).default(300),
  outage_share: Joi.number().greater(0).max(1).default(0.5),
  repeat_s: Joi.number().integer().min(0).max(30 * 86400).default(0),
  backlog_s: positiveInt.max(30 * 86400).default(3600),
  check_interval_s: positiveInt.max(3600).default(5),
  flaps_per_hour: positiveInt.max(10_000).default(3),
}).default();
