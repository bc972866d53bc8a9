import { readFileSync } from 'node:fs';
import { Command, type CommandOptions } from 'commander';
import { exclusiveFlags } from './exclusive-flags.ts';
import { EXIT, onClosedOutput, reportFailure } from './fail.ts';
import { dropSequelizeRollbackWarnings } from './sequelize-noise.ts';

/** Commands load their modules when run, so `rigd --version` stays fast. */
type Action = (...args: never[]) => Promise<void>;
function lazy<M>(load: () => Promise<M>, pick: (m: M) => Action) {
  return async (...args: unknown[]) => {
    const fn = pick(await load()) as (...a: unknown[]) => Promise<void>;
    await fn(...args);
  };
}

function version(): string {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
  return pkg.version;
}

export function buildProgram(): Command {
  const program = new Command('rigd')
    .description('rig fleet appliance: rig reports, uploads, capture ingestion, and the operator tools')
    .version(version(), '-V, --version')
    .option('-c, --config <file>', 'config file (default: $RIGD_CONFIG, else /etc/rigd/config.yaml, else built-in defaults)')
    .showHelpAfterError('(run rigd --help for usage)')
    .exitOverride();

  const sub = (name: string, opts?: CommandOptions) => program.command(name, opts).exitOverride();

  sub('serve')
    .description('run the HTTP server, upload monitor and ingester (what systemd runs)')
    .option('-p, --port <n>', 'port to listen on (overrides server.port)')
    .option('-H, --host <addr>', 'address to listen on (overrides server.host)')
    .option('--log-format <format>', 'auto | json | pretty (overrides log.format; auto: pretty on a terminal, else JSON lines)')
    .action(lazy(() => import('./commands/serve.ts'), (m) => m.serve));

  const user = sub('user').description('manage users who log in to the API');
  user
    .command('add <name>')
    .description('add a user')
    .requiredOption('-e, --email <email>', 'email address')
    .option('--password-stdin', 'read the password from standard input')
    .option('--admin', 'may change any user')
    .option('--json', 'print the new user as JSON')
    .exitOverride()
    .action(lazy(() => import('./commands/user.ts'), (m) => m.userAdd));
  user
    .command('list')
    .description('list users')
    .option('--json', 'JSON only')
    .exitOverride()
    .action(lazy(() => import('./commands/user.ts'), (m) => m.userList));
  user
    .command('passwd <name>')
    .description("set a user's password (ends their sessions)")
    .option('--password-stdin', 'read the password from standard input')
    .exitOverride()
    .action(lazy(() => import('./commands/user.ts'), (m) => m.userPasswd));
  user
    .command('remove <name>')
    .description('remove a user and end their sessions')
    .exitOverride()
    .action(lazy(() => import('./commands/user.ts'), (m) => m.userRemove));
  const userSet = user
    .command('set <name>')
    .description("change a user's email or admin flag")
    .option('-e, --email <email>', 'new email address')
    .option('--admin', 'may change any user')
    .option('--no-admin', 'no longer an admin')
    .option('--json', 'print the user as JSON')
    .exitOverride()
    .action(lazy(() => import('./commands/user.ts'), (m) => m.userSet));
  exclusiveFlags(userSet, 'admin', 'no-admin');
  user
    .command('unlock <name>')
    .description("clear a user's failed logins (from every client)")
    .option('--json', 'JSON only')
    .exitOverride()
    .action(lazy(() => import('./commands/user.ts'), (m) => m.userUnlock));

  const audit = sub('audit')
    .description('the audit log: logins, sessions, user changes, ingests, backups, restores, rig identity')
    .option('--since <duration>', 'how far back: 30m, 24h, 7d, 2w (default: everything kept)')
    .option('--client <address>', 'only entries from this client address (IPv4 or IPv6)')
    .option('--kind <kinds>', 'only entries of these kinds, separated by commas: rig.refused,key.refused')
    .option('--json', 'JSON only (with --follow: one JSON object per line)')
    .option('-f, --follow', 'keep printing new (matching) entries until interrupted')
    .action(lazy(() => import('./commands/audit.ts'), (m) => m.auditCommand));
  audit
    .command('verify')
    .description("check the audit log's hash chain: exit 1 naming the first removed or changed entry")
    .option('--json', 'JSON only')
    .exitOverride()
    .action(lazy(() => import('./commands/audit.ts'), (m) => m.auditVerifyCommand));

  const rigs = sub('rigs')
    .description('list rigs and their status (online, stale, offline)')
    .option('--json', 'JSON only')
    .option('--status <status>', 'only rigs with this status: online, stale or offline')
    .option('--branch <branch>', 'only rigs on this software branch')
    .option('--sort <order>', 'id (natural order) or last-seen (most recent first)', 'id')
    .option('-w, --watch', 'a live table on the terminal (q quits); with --json: NDJSON change events until interrupted')
    .option('--interval <seconds>', 'refresh of --watch', '2')
    .action(lazy(() => import('./commands/rigs.ts'), (m) => m.rigsCommand));
  rigs
    .command('show <id>')
    .description("one rig: status, serial, branch, addresses, last report, recent positions, uploads and captures")
    .option('--json', 'JSON only')
    .exitOverride()
    .action(lazy(() => import('./commands/rig-show.ts'), (m) => m.rigsShowCommand));
  rigs
    .command('history <id>')
    .description("a rig's reports, newest first: time, position, software")
    .option('--since <duration>', 'how far back: 30m, 24h, 7d, 2w (default 24h)')
    .option('--csv', 'CSV with a header line')
    .option('--json', 'JSON only')
    .exitOverride()
    .action(lazy(() => import('./commands/rig-history.ts'), (m) => m.rigsHistoryCommand));
  rigs
    .command('rebind <id> <address>')
    .description('bind a rig id to a VPN address: its reports from any other address are refused (rigs.address_binding)')
    .exitOverride()
    .action(lazy(() => import('./commands/rig-binding.ts'), (m) => m.rigsRebindCommand));
  rigs
    .command('forget <id>')
    .description("unbind a rig id from its VPN address: its next report, from any address, binds it again (history is kept)")
    .exitOverride()
    .action(lazy(() => import('./commands/rig-binding.ts'), (m) => m.rigsForgetCommand));

  const alerts = sub('alerts')
    .description('incidents: rigs offline by their rhythm, fleet outages, failed captures, low disk, ingest backlog, nodes down, identity refusals')
    .option('--json', 'JSON only')
    .option('-w, --watch', 'a live table on the terminal (q quits)')
    .option('--interval <seconds>', 'refresh of --watch', '2')
    .action(lazy(() => import('./commands/alerts.ts'), (m) => m.alertsCommand));
  alerts
    .command('ack <id>')
    .description('acknowledge an open incident: no more repeats (alerts.repeat_s); it still resolves by itself')
    .option('--json', 'print the incident as JSON')
    .exitOverride()
    .action(lazy(() => import('./commands/alerts.ts'), (m) => m.alertsAckCommand));

  sub('fleet')
    .description('the fleet at a glance: rigs by status, by branch and version, and rigs still on an old version')
    .option('--json', 'JSON only')
    .action(lazy(() => import('./commands/fleet.ts'), (m) => m.fleetCommand));

  sub('uploads')
    .description('recent rig uploads, newest first, with their state and progress')
    .option('--json', 'JSON only')
    .option('--state <state>', 'only uploads in this state: reserved, uploaded or expired')
    .option('--limit <n>', 'how many (default 50)')
    .option('-w, --watch', 'a live view with a progress bar per upload (q quits); with --json: NDJSON change events')
    .option('--interval <seconds>', 'refresh of --watch', '2')
    .action(lazy(() => import('./commands/uploads.ts'), (m) => m.uploadsCommand));

  const captures = sub('captures')
    .description('capture files and their ingestion, newest first')
    .option('--json', 'JSON only')
    .option('--state <state>', 'only captures in this state: queued, ingesting, ingested or failed')
    .option('--rig <id>', 'only captures of this rig')
    .option('--project <slug>', 'only captures of this project')
    .option('--limit <n>', 'how many (default 50)')
    .option('-w, --watch', 'a live view of ingestion with a progress bar per download (q quits); with --json: NDJSON change events')
    .option('--interval <seconds>', 'refresh of --watch', '2')
    .action(lazy(() => import('./commands/captures.ts'), (m) => m.capturesCommand));
  captures
    .command('show <id>')
    .description('one capture: state, rig, project, attempts, errors, progress, and its tables (rows, columns, time span)')
    .option('--json', 'JSON only')
    .exitOverride()
    .action(lazy(() => import('./commands/capture-show.ts'), (m) => m.capturesShowCommand));
  captures
    .command('export <id> <table>')
    .description("one capture's rows of one table from the capture store, in the capture's column order")
    .option('--format <format>', 'csv (header line, blobs as base64) or ndjson (one object per line, blobs as base64)', undefined)
    .option('-o, --output <file>', 'write to FILE (whole or not at all) instead of standard output')
    .exitOverride()
    .action(lazy(() => import('./commands/capture-export.ts'), (m) => m.capturesExportCommand));
  captures
    .command('query <sql>')
    .description('run SQL over the capture store, opened read-only (any write is refused)')
    .option('--json', 'an array of objects only')
    .option('--csv', 'CSV with a header line')
    .option('--limit <n>', 'most rows shown (default 1000)')
    .option('--timeout <seconds>', 'stop the query after this long (default 30)')
    .exitOverride()
    .action(lazy(() => import('./commands/capture-query.ts'), (m) => m.capturesQueryCommand));
  const reimport = captures
    .command('reimport')
    .description('import ingested captures again from storage, replacing their rows in the capture store (rebuilds a lost store)')
    .option('--all', 'every ingested capture (not with --rig or --since)')
    .option('--rig <id>', 'only captures of this rig')
    .option('--since <time>', 'only captures last imported since then: an ISO 8601 time or a duration such as 24h')
    .option('--wait', 'wait until every capture queued has ended: exit 0 when all were ingested, 1 when any failed')
    .option('--json', 'JSON only')
    .exitOverride()
    .action(lazy(() => import('./commands/capture-reimport.ts'), (m) => m.capturesReimportCommand));
  // --all is every capture: narrowing it by --rig or --since contradicts it (--rig with --since narrows both ways).
  exclusiveFlags(reimport, 'all', 'rig');
  exclusiveFlags(reimport, 'all', 'since');

  sub('ingest')
    .description('queue a capture file in storage for ingestion (rigd serve ingests it)')
    .argument('<url-or-key>', 'an object URL of this storage, or a key in the bucket')
    .option('--wait', 'show progress until it is ingested (exit 0) or failed (exit 1)')
    .option('--force', 'import an ingested capture again, replacing its rows in the capture store')
    .option('--json', 'print the capture as JSON only')
    .action(lazy(() => import('./commands/ingest.ts'), (m) => m.ingestCommand));

  const notify = sub('notify').description('incident notifications: webhooks and e-mail (notify.* in the config)');
  notify
    .command('test')
    .description('send one test message now (not through the queue) to each configured target and print what each receiver answered; exit 1 if any failed')
    .option('--webhook', 'only the webhooks')
    .option('--email', 'only the e-mail target')
    .option('--json', 'JSON only')
    .exitOverride()
    .action(lazy(() => import('./commands/notify.ts'), (m) => m.notifyTestCommand));

  sub('doctor')
    .description('check the install (read-only): config, data_dir, data files, database, storage, bucket, webhook wiring, VPN address, free space, server, upload host')
    .option('--json', 'JSON only')
    .action(lazy(() => import('./commands/doctor.ts'), (m) => m.doctorCommand));

  sub('backup')
    .description('write a consistent copy of the database to FILE (safe while rigd serve runs)')
    .argument('<file>', 'where to write the copy (must not exist)')
    .option('--capture-store <file>', 'also write a consistent copy of the capture store there (it can be large)')
    .option('--json', 'JSON only')
    .action(lazy(() => import('./commands/backup.ts'), (m) => m.backupCommand));

  sub('restore')
    .description('replace the database with a backup (stop rigd serve first; the old file is kept aside)')
    .argument('<file>', 'a file written by rigd backup')
    .option('--json', 'JSON only')
    .action(lazy(() => import('./commands/backup.ts'), (m) => m.restoreCommand));

  sub('db')
    .description('move the database between engines')
    .command('copy')
    .description('copy the SQLite database and capture store of data_dir into an empty PostgreSQL database (stop rigd serve first)')
    .requiredOption('--to <url>', 'the target: postgres://user:password@host:5432/database (must be empty)')
    .option('--json', 'JSON only')
    .exitOverride()
    .action(lazy(() => import('./commands/db-copy.ts'), (m) => m.dbCopyCommand));

  sub('migrate')
    .description('create or upgrade the database (serve does this on start)')
    .option('--json', 'JSON only')
    .action(lazy(() => import('./commands/migrate.ts'), (m) => m.migrateCommand));

  return program;
}

async function handOver(): Promise<void> {
  // Run as root on a data_dir of the service user: what the command created there goes to that user.
  const { handOverDataDirs } = await import('./context.ts');
  await handOverDataDirs();
}

export async function main(argv: string[]): Promise<number> {
  onClosedOutput(handOver);
  try {
    const program = buildProgram();
    // One-shot commands report a failed write in one line; serve keeps Sequelize's warning in its log.
    program.hook('preAction', (_program, action) => {
      if (action.name() !== 'serve') dropSequelizeRollbackWarnings();
    });
    await program.parseAsync(argv);
    return EXIT.ok;
  } catch (err) {
    return reportFailure(err);
  } finally {
    await handOver();
  }
}
