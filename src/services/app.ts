import type { Config } from '../config/schema.ts';
import { openDatabase, sharedByNodes, type Database } from '../db/index.ts';
import { silentLogger, type Logger } from '../log.ts';
import { createStorage, type Storage } from '../storage/index.ts';
import { AlertService } from './alerts/service.ts';
import type { OnIncident } from './alerts/event.ts';
import { CaptureWorker } from '../ingest/capture-worker.ts';
import { CaptureNotices } from './captures/notices.ts';
import { CaptureService } from './captures/service.ts';
import { ClusterDuties } from './cluster/duties.ts';
import { instanceId } from './cluster/instance-id.ts';
import { LIVE_HEARTBEATS } from './cluster/live.ts';
import { NodePresence } from './cluster/node-presence.ts';
import { HealthChecks } from './doctor/health.ts';
import { LoginThrottle } from './auth/login-throttle.ts';
import { AuditRetention } from './audit/retention.ts';
import { auditIdentityEvents } from './audit/identity.ts';
import { AuditTally } from './audit/tally.ts';
import { noMetrics, type AppMetrics } from './metrics/contract.ts';
import { Passwords } from './auth/passwords.ts';
import { BucketCheck } from './uploads/bucket-check.ts';
import { rigDirectory } from './rigs/directory.ts';
import { identityEvents } from './rigs/identity-events.ts';
import { RigService } from './rigs/service.ts';
import { SessionService } from './auth/sessions.ts';
import { UploadMonitor } from './uploads/monitor.ts';
import { UploadService } from './uploads/service.ts';
import { UserService } from './auth/users.ts';
import { Notifier } from './notify/notifier.ts';
import { NotifyWorker } from './notify/worker.ts';
import type { BackgroundTask } from './background-task.ts';

export type { BackgroundTask } from './background-task.ts';

/** Everything a front end (the HTTP server or a CLI command) works through. */
export interface App {
  config: Readonly<Config>;
  log: Logger;
  db: Database;
  storage: Storage;
  users: UserService;
  /** Password hashing on its bounded pool (its counters show what reached bcrypt). */
  passwords: Passwords;
  sessions: SessionService;
  rigs: RigService;
  uploads: UploadService;
  /** What GET /metrics shows (counts nothing when opened with `metrics: false`). */
  metrics: AppMetrics;
  /** The write-side checks of GET /healthz (free space, writes, data file owners). */
  health: HealthChecks;
  captures: CaptureService;
  /** The capture webhook: storage -> uploads -> captures. */
  captureNotices: CaptureNotices;
  /** Refusals that come by the thousand (quota refusals), counted and written to the audit log once a minute per rig. */
  auditTally: AuditTally;
  /** Queues incident notifications (webhooks, e-mail) inside the caller's write transaction. */
  notifier: Notifier;
  /** Incidents: the sweep (a cluster duty of `rigd serve`) and acknowledgements. */
  alerts: AlertService;
  /** This node's name among the nodes sharing the database (cluster.instance_id or "<hostname>:<port>"). */
  readonly instanceId: string;
  /**
   * Registers this node and starts the background tasks (only `rigd serve` does). port: the one the
   * server listens on, for the instance id when cluster.instance_id is empty (config's by default).
   * Throws CannotStart when a live node holds the same instance id.
   */
  start(opts?: { port?: number }): Promise<void>;
  /** Stops background work, waits for queued writes, closes the database. */
  close(): Promise<void>;
}

export interface OpenAppOptions {
  log?: Logger;
  /** Build the /metrics registry (prom-client); commands that answer no scrape skip loading it. @default true */
  metrics?: boolean;
  /**
   * Report batches committing at once (PostgreSQL; SQLite has one writer). @default the write
   * path's besideWrites: 4 on PostgreSQL (bench/engines.ts measures 1 against 4)
   */
  reportWriters?: number;
  /** Sees every incident transition, inside its write transaction, after its notifications were queued (src/services/alerts/event.ts). */
  onIncident?: OnIncident;
}

/** Opens the database in config.data_dir (creating and migrating it) and builds the services. */
export async function openApp(config: Readonly<Config>, opts: OpenAppOptions = {}): Promise<App> {
  const log = opts.log ?? silentLogger;
  const db = await openDatabase(config.data_dir, { url: config.database.url, postgres: config.database });
  let storage: Storage;
  try {
    storage = createStorage(config);
  } catch (err) {
    await db.close();
    throw err;
  }
  const metrics = opts.metrics === false ? noMetrics : new (await import('./metrics/index.ts')).Metrics(db, config);
  const passwords = new Passwords(config.auth.bcrypt_cost, {
    concurrency: config.auth.hash_concurrency,
    maxQueued: config.auth.max_queued_hashes,
  });
  const throttle = new LoginThrottle(db, {
    perLogin: config.auth.max_failures_per_login,
    perClient: config.auth.max_failures_per_client,
    windowMs: config.auth.failure_window_s * 1000,
    maxDelayMs: config.auth.max_login_delay_s * 1000,
  });
  const users = new UserService(db, passwords, throttle);
  const sessions = new SessionService(db, users, passwords, throttle, config.auth.token_ttl_days * 86_400_000, config.auth.max_sessions_per_user);
  const directory = rigDirectory(db);
  // Every refusal, takeover, rebind, key refusal and quota refusal of rig identity goes through it:
  // logged, and on record in the audit log (quota refusals aggregated per rig and minute).
  const auditTally = new AuditTally(db, log);
  const events = auditIdentityEvents(identityEvents(log), db, auditTally, log);
  const rigs = new RigService(db, config, {
    onReported: (peer) => directory.forget(peer),
    events,
    reportWriters: opts.reportWriters,
    retention: {
      onError: (err) => log.warn('rig history retention failed', { error: String(err) }),
      onPruned: (run) =>
        log.info('rig history retention', { removed: run.removed, received_before: run.cutoff.toISOString(), measured_from: run.reference.toISOString(), retention_days: config.rigs.history_retention_days }),
    },
  });
  const uploads = new UploadService(db, storage, directory, config, log, events);
  const captures = new CaptureService(db, storage, config, log);
  // One direction: a completed upload hands its capture over; captures never call uploads.
  uploads.onUploaded((upload) => captures.uploaded(upload));
  const captureNotices = new CaptureNotices(storage, uploads, captures);

  let instance = instanceId(config);
  metrics.setInstance(instance);
  const heartbeatMs = config.cluster.heartbeat_s * 1000;
  // First to start: a node whose instance id is taken starts nothing else.
  const presence = new NodePresence(db, () => instance, heartbeatMs, log, sharedByNodes(db) ? undefined : config.data_dir);
  // Each incident transition queues its notifications in its own transaction (sent once, kept across
  // restarts); a caller's onIncident (tests) sees the same events after that.
  const notifier = new Notifier(config.notify);
  const onIncident: OnIncident = async (event, transaction) => {
    await notifier.enqueue(event, transaction);
    await opts.onIncident?.(event, transaction);
  };
  const alerts = new AlertService(db, config, { onIncident, log, instance: () => instance, writableSince: (now) => presence.writable.at(now) });
  // Upload expiry, retention and the alerts sweep: on one node at a time (every node on SQLite's one).
  const duties = new ClusterDuties(db, [new UploadMonitor(db, storage, uploads, log, undefined, config.uploads.keep_expired_days), rigs.retention, new AuditRetention(db, config.audit.retention_days, log), alerts], heartbeatMs, log);
  // Uploads stored but never handed over (killed between the two steps): handed over at start.
  const handOver: BackgroundTask = {
    start: () => uploads.recoverHandOvers().then(() => undefined, (err) => log.warn('handing over uploads left without a capture failed', { error: String(err) })),
    stop: async () => undefined,
  };
  const background: BackgroundTask[] = [presence, new BucketCheck(storage, log), duties, auditTally, handOver];
  // Notifications: their own runner on the jobs table (never behind long ingests).
  background.push(new NotifyWorker(db, config, log, { onOutcome: metrics.ingest.onOutcome, node: () => instance, nodeStaleMs: LIVE_HEARTBEATS * heartbeatMs }));
  // Last to start, first to stop: SIGTERM drains running ingests (bounded) before anything else closes.
  background.push(new CaptureWorker(db, storage, config, log, { onOutcome: metrics.ingest.onOutcome, node: () => instance, nodeStaleMs: LIVE_HEARTBEATS * heartbeatMs }));
  let started: BackgroundTask[] = [];
  let closed = false;
  return {
    config,
    log,
    db,
    storage,
    users,
    passwords,
    sessions,
    rigs,
    uploads,
    metrics,
    health: new HealthChecks(db, config),
    captures,
    captureNotices,
    auditTally,
    notifier,
    alerts,
    get instanceId() {
      return instance;
    },
    async start(opts = {}) {
      instance = instanceId(config, opts.port ?? config.server.port);
      if (opts.port !== undefined && storage.driver === 'embedded') storage.servedOn(opts.port);
      metrics.setInstance(instance);
      for (const task of background) {
        await task.start();
        started.push(task);
      }
    },
    async close() {
      if (closed) return;
      closed = true;
      for (const task of started.reverse()) await task.stop();
      started = [];
      events.flush();
      await events.settled();
      await uploads.progress.flush();
      await db.close();
    },
  };
}
