import Joi from 'joi';
import { alertsSchema, type AlertsConfig } from './alerts.ts';
import { capturesSchema, type CapturesConfig } from './captures.ts';
import { resolveMinioPort } from './minio-endpoint.ts';
import { notifySchema, type NotifyConfig } from './notify.ts';
import { addressOrCidr, bucketName, databaseUrl, endpoint, httpUrl, ipv4Cidr, KeyedProblem, pathText, tileUrlTemplate } from './rules.ts';

/**
 * The whole configuration, as the program sees it after defaults are applied.
 * Every key is documented, with its default, in config.example.yaml.
 */
export interface Config {
  server: {
    host: string;
    port: number;
    base_url: string;
    /** Addresses or CIDRs of reverse proxies whose X-Forwarded-For is believed. */
    trusted_proxies: string[];
    /** Mark cookies Secure (only when rigd is served over HTTPS). */
    secure_cookies: boolean;
    /** Secret for the _service_pm_session cookie; generated into data_dir when empty. */
    cookie_secret: string;
    /** Largest JSON request body, in bytes. */
    max_payload_bytes: number;
    /** /healthz fails while data_dir's file system has less free than this, in MiB. */
    min_free_mb: number;
    /** Clients (CIDRs) that may read /metrics; default loopback and vpn.cidr. */
    metrics_allow: string[];
    /** Clients (CIDRs) that may read /healthz; default loopback and vpn.cidr. */
    health_allow: string[];
  };
  vpn: { host: string; cidr: string; rig_domain: string };
  data_dir: string;
  database: {
    /** Empty: SQLite in data_dir. postgres://user:password@host:5432/db: that PostgreSQL database. */
    url: string;
    /**
     * A session connection to the same database when url goes through a transaction-mode pooler
     * (PgBouncer): LISTEN, the cluster duties lock, migrations and the capture store use it. Empty: url.
     */
    direct_url: string;
    /** Connections of the pool at most (the dedicated ones come on top: see docs). */
    pool_max: number;
    /** Longest wait for a free pool connection before a request answers 503 database_unavailable, in ms. */
    acquire_timeout_ms: number;
    /** Longest wait of a write for a row lock (PostgreSQL lock_timeout), in seconds. */
    lock_timeout_s: number;
    /** Longest statement of a write (PostgreSQL statement_timeout), in seconds. */
    statement_timeout_s: number;
    /** A write transaction idle this long is ended by the server (idle_in_transaction_session_timeout), in seconds. */
    idle_in_transaction_timeout_s: number;
    /** TCP keepalive of every connection: first probe after this many idle seconds. */
    keepalive_s: number;
  };
  storage: {
    driver: 'embedded' | 'minio';
    bucket: string;
    public_url: string;
    upload_url_ttl: number;
    max_upload_size: number;
    /** Seconds without a byte after which an upload to the embedded store is aborted. */
    upload_idle_timeout_s: number;
    minio: {
      endpoint: string;
      port: number;
      use_ssl: boolean;
      access_key: string;
      secret_key: string;
      region: string;
      public_endpoint: string;
      /** Milliseconds before a storage call counts as an outage. */
      timeout_ms: number;
    };
  };
  ingest: {
    concurrency: number;
    max_attempts: number;
    webhook_token: string;
    /** Queue .sqlite/.db uploads for ingestion as soon as they complete. */
    auto_enqueue: boolean;
    /** Milliseconds an ingest job may run before it is stopped. */
    job_timeout_ms: number;
    /** Most bytes per second one ingest job reads from storage; 0 = no limit. */
    read_bytes_per_s: number;
    /** Seconds a job's lease lasts without a heartbeat; another node reclaims the job after it. */
    lease_s: number;
  };
  /** Per-capture bounds of the capture store: one capture can never block, widen or slow another. */
  captures: CapturesConfig;
  rigs: {
    online_after_s: number;
    offline_after_s: number;
    history_retention_days: number;
    /** Which VPN address may report for a rig id: only its bound one, another once it is offline, or any. */
    address_binding: 'strict' | 'while_online' | 'off';
    /** New rig ids one VPN address may register per hour; past this, 429. */
    new_ids_per_address_per_hour: number;
  };
  uploads: {
    /** Reservations one rig may hold open (reserved, URL not expired); past this, 429. */
    open_per_rig: number;
    /** Bytes one rig may reserve per day (rolling 24 h); past this, 429. */
    bytes_per_rig_per_day: number;
    /** MiB kept free for the database on top of server.min_free_mb when a reservation is judged. */
    database_reserve_mb: number;
    /** Expired reservations older than this many days are removed. */
    keep_expired_days: number;
  };
  auth: {
    /** Lifetime of an API session token, in days. */
    token_ttl_days: number;
    /** Live sessions one user may hold; a login past this ends the user's least recently used session. */
    max_sessions_per_user: number;
    /** bcrypt work factor for new password hashes. */
    bcrypt_cost: number;
    /** Failed logins allowed per login name within the window before 429. */
    max_failures_per_login: number;
    /** Failed logins allowed per client address within the window before 429. */
    max_failures_per_client: number;
    /** Length of the failed-login window, in seconds. */
    failure_window_s: number;
    /** bcrypt operations running at once; the rest of libuv's thread pool stays free for the database. */
    hash_concurrency: number;
    /** Logins (password hashes) allowed to wait for the pool; past this, 429 login_busy with Retry-After. */
    max_queued_hashes: number;
    /** Longest delay of a login attempt while its login is under attack from many clients, in seconds. */
    max_login_delay_s: number;
  };
  log: {
    level: 'debug' | 'info' | 'warn' | 'error' | 'silent';
    format: 'auto' | 'json' | 'pretty';
    /** summary: answered rig reports at debug, one info line per summary_interval_s counts them; each: one info line per report. */
    reports: 'summary' | 'each';
    /** Seconds between two report summary lines. */
    summary_interval_s: number;
    /** A request slower than this (ms) is logged at info whatever its route; 0: every request. */
    slow_request_ms: number;
  };
  page: {
    /** XYZ tile URL template for the map pages; empty: markers on a plain graticule, no network. */
    map_tiles_url: string;
    /** Clients (CIDRs) that may open /rigs, /rigs/{id}, /map and /map/rigs.json; default loopback and vpn.cidr. */
    allow: string[];
    /** Those pages ask for an operator login (a login page and the session cookie). */
    login: boolean;
  };
  audit: {
    /** Audit entries older than this are removed (the chain stays verifiable), in days. */
    retention_days: number;
  };
  cluster: {
    /** This node's name among the nodes sharing one PostgreSQL database; empty: "<hostname>:<server.port>". */
    instance_id: string;
    /** The deployment is one node: allows the embedded store with a PostgreSQL database. */
    single_node: boolean;
    /** Seconds between a node's heartbeats; a node silent for three of them is not live. */
    heartbeat_s: number;
  };
  /** Where incidents are sent (src/services/notify): signed webhooks and e-mail, as jobs of rigd's own queue. */
  notify: NotifyConfig;
  alerts: AlertsConfig;
}

const port = Joi.number().integer().min(0).max(65535);
const positiveInt = Joi.number().integer().min(1);

export const configSchema = Joi.object<Config>({
  server: Joi.object({
    host: Joi.string().hostname().default('0.0.0.0'),
    port: port.default(3000),
    base_url: httpUrl('http://gateway.example:3000').default('http://localhost:3000'),
    trusted_proxies: Joi.array()
      .items(addressOrCidr())
      .single()
      .default([]),
    secure_cookies: Joi.boolean().default(false),
    cookie_secret: Joi.string().allow('').min(32).default(''),
    max_payload_bytes: positiveInt.max(64 * 1024 ** 2).default(1024 * 1024),
    min_free_mb: Joi.number().integer().min(0).default(64),
    // Empty here: filled with loopback and vpn.cidr below (the default depends on vpn.cidr).
    metrics_allow: Joi.array().items(addressOrCidr()).single(),
    health_allow: Joi.array().items(addressOrCidr()).single(),
  }).default(),
  vpn: Joi.object({
    host: Joi.string().hostname().lowercase().default('vpn.rigs.internal'),
    cidr: ipv4Cidr().default('10.144.0.0/16'),
    rig_domain: Joi.string().hostname().lowercase().default('rigs.internal'),
  }).default(),
  data_dir: pathText().default('./data'),
  database: Joi.object({
    url: databaseUrl().allow('').default(''),
    direct_url: databaseUrl().allow('').default(''),
    pool_max: positiveInt.max(1000).default(10),
    acquire_timeout_ms: positiveInt.max(60_000).default(2000),
    lock_timeout_s: positiveInt.max(3600).default(5),
    statement_timeout_s: positiveInt.max(86_400).default(30),
    idle_in_transaction_timeout_s: positiveInt.max(3600).default(4),
    keepalive_s: positiveInt.max(7200).default(10),
  }).default(),
  storage: Joi.object({
    driver: Joi.string().valid('embedded', 'minio').default('embedded'),
    bucket: bucketName().default('captures'),
    public_url: httpUrl('http://vpn.rigs.internal:3000').allow('').default(''),
    upload_url_ttl: Joi.number().integer().min(1).max(604800).default(900),
    max_upload_size: Joi.number().integer().min(0).max(5 * 1024 ** 3).default(104857600),
    upload_idle_timeout_s: positiveInt.max(3600).default(60),
    minio: Joi.object({
      endpoint: endpoint().default('127.0.0.1'),
      port: port.min(1).default(9000),
      use_ssl: Joi.boolean().default(false),
      access_key: Joi.string().allow('').default(''),
      secret_key: Joi.string().allow('').default(''),
      region: Joi.string().default('us-east-1'),
      public_endpoint: endpoint().allow('').default(''),
      timeout_ms: positiveInt.max(600_000).default(5000),
    })
      .custom(resolveMinioPort)
      .default(),
  }).default(),
  ingest: Joi.object({
    concurrency: positiveInt.max(64).default(2),
    max_attempts: positiveInt.max(100).default(5),
    webhook_token: Joi.string().allow('').default(''),
    auto_enqueue: Joi.boolean().default(true),
    job_timeout_ms: positiveInt.max(24 * 3600 * 1000).default(10 * 60 * 1000),
    read_bytes_per_s: Joi.number().integer().min(0).max(10 * 1024 ** 3).default(0),
    lease_s: positiveInt.max(3600).default(30),
  }).default(),
  captures: capturesSchema,
  rigs: Joi.object({
    online_after_s: positiveInt.max(30 * 86400).default(300),
    offline_after_s: positiveInt.max(365 * 86400).default(3600),
    history_retention_days: positiveInt.max(36500).default(90),
    address_binding: Joi.string().valid('strict', 'while_online', 'off').default('while_online'),
    new_ids_per_address_per_hour: positiveInt.max(10_000_000).default(100),
  }).default(),
  uploads: Joi.object({
    open_per_rig: positiveInt.max(10_000_000).default(1000),
    bytes_per_rig_per_day: positiveInt.max(2 ** 50).default(64 * 1024 ** 3),
    database_reserve_mb: Joi.number().integer().min(0).max(1024 * 1024).default(64),
    keep_expired_days: positiveInt.max(36500).default(7),
  }).default(),
  auth: Joi.object({
    token_ttl_days: positiveInt.max(3650).default(30),
    max_sessions_per_user: positiveInt.max(100_000).default(200),
    bcrypt_cost: Joi.number().integer().min(4).max(31).default(12),
    max_failures_per_login: positiveInt.max(1_000_000).default(10),
    max_failures_per_client: positiveInt.max(1_000_000).default(30),
    failure_window_s: positiveInt.max(30 * 86400).default(900),
    hash_concurrency: positiveInt.max(16).default(1),
    max_queued_hashes: positiveInt.max(100_000).default(200),
    max_login_delay_s: Joi.number().min(0).max(60).default(5),
  }).default(),
  log: Joi.object({
    level: Joi.string().valid('debug', 'info', 'warn', 'error', 'silent').default('info'),
    format: Joi.string().valid('auto', 'json', 'pretty').default('auto'),
    reports: Joi.string().valid('summary', 'each').default('summary'),
    summary_interval_s: positiveInt.max(86_400).default(60),
    slow_request_ms: Joi.number().integer().min(0).max(3_600_000).default(1000),
  }).default(),
  page: Joi.object({
    map_tiles_url: tileUrlTemplate('https://tiles.example/{z}/{x}/{y}.png').allow('').default(''),
    allow: Joi.array().items(addressOrCidr()).single(),
    login: Joi.boolean().default(false),
  }).default(),
  audit: Joi.object({
    retention_days: positiveInt.max(36500).default(365),
  }).default(),
  cluster: Joi.object({
    instance_id: Joi.string()
      .allow('')
      .max(64)
      .pattern(/^[A-Za-z0-9][A-Za-z0-9._:-]*$/, 'letters, digits, ".", "_", ":" and "-"')
      .default(''),
    single_node: Joi.boolean().default(false),
    heartbeat_s: positiveInt.max(300).default(5),
  }).default(),
  notify: notifySchema,
  alerts: alertsSchema,
})
  .default()
  .custom((value: Config) => {
    // Who may look: loopback and the VPN unless the config says otherwise.
    const viewers = () => ['127.0.0.0/8', '::1/128', value.vpn.cidr];
    value.page.allow ??= viewers();
    value.server.metrics_allow ??= viewers();
    value.server.health_allow ??= viewers();
    if (value.rigs.offline_after_s <= value.rigs.online_after_s) {
      throw new KeyedProblem('rigs.offline_after_s', value.rigs.offline_after_s, `is not greater than rigs.online_after_s (expected more than ${value.rigs.online_after_s})`);
    }
    // Several nodes share one PostgreSQL database; objects on one node's disk are not seen by the others.
    if (value.database.url !== '' && value.storage.driver === 'embedded' && !value.cluster.single_node) {
      throw new KeyedProblem(
        'storage.driver',
        value.storage.driver,
        "keeps objects on this node's disk, so it serves one node only (expected minio with database.url set, or cluster.single_node: true)",
      );
    }
    return value;
  });
