/**
 * `rigd doctor`: checks an install the way an operator would, one finding per check, each failure
 * with the fix to apply. It changes nothing in data_dir (test/cli/doctor-readonly.test.ts): it asks
 * with access(2), reads the database read-only, and sets up no store, bucket or credentials.
 */
import { databaseSite } from '../../db/site.ts';
import { loadConfig, type LoadOptions } from '../../config/load.ts';
import { EnvFileError } from '../../errors.ts';
import { withEnvFile } from '../../config/env-file.ts';
import { unknownEnvText, unknownEnvVars } from '../../config/env-names.ts';
import type { Config } from '../../config/schema.ts';
import { checkDataDir, checkDiskSpace, checkVpnInterface } from './host.ts';
import { checkServer, checkUploadHost } from './network.ts';
import { checkCaptureStore, checkDatabase } from './database.ts';
import { checkCaptureRows } from './capture-rows.ts';
import { checkDataFiles } from './files.ts';
import { checkNodes } from './nodes.ts';
import { checkDuties } from './duties.ts';
import { checkNotifications } from './notifications.ts';
import { dataDirOwner, handOver } from '../data-files.ts';
import { errorText, fail, ok, warn, type Finding } from './finding.ts';
import { checkStorage } from './storage.ts';

export type { CheckStatus, Finding } from './finding.ts';

export interface DoctorReport {
  ok: boolean;
  config_file: string | null;
  /** The absolute data_dir in use (null when the config is invalid). */
  data_dir: string | null;
  checks: Finding[];
}

/** Runs every check; `ok` is false when any check failed (warnings do not fail). */
export async function runDoctor(load: LoadOptions): Promise<DoctorReport> {
  let config: Readonly<Config>;
  let file: string | null = null;
  try {
    const loaded = loadConfig(load);
    config = loaded.config;
    file = loaded.file;
  } catch (err) {
    const where = load.file ?? load.env?.RIGD_CONFIG ?? 'the config file';
    const fix =
      err instanceof EnvFileError
        ? `run rigd doctor with sudo, or set RIGD_ENV_FILE to the file the service reads (empty: none)`
        : `correct the key named above in ${where} (every key is in config.example.yaml), then run rigd doctor again`;
    const checks = [fail('config', errorText(err), fix)];
    return { ok: false, config_file: load.file ?? null, data_dir: null, checks };
  }
  const checks: Finding[] = [ok('config', `${file ? `${file} is valid` : `no config file: built-in defaults and RIGD_ variables (${config.storage.driver} storage)`}; data_dir ${config.data_dir}`)];
  for (const u of unknownEnvVars(withEnvFile(load.env ?? process.env), config)) {
    checks.push(warn('environment', unknownEnvText(u), `${u.nearest ? `rename it to ${u.nearest}` : 'rename it'} (in the environment or /etc/rigd/rigd.env), or remove it`));
  }
  // Opening the database and pinging the embedded store may create files; run as root, they go to
  // data_dir's owner (only those: doctor changes nothing that was there before).
  const owner = dataDirOwner(config.data_dir);
  const started = Date.now();
  checks.push(...(await checkDataDir(config.data_dir)));
  checks.push(checkDataFiles(config.data_dir));
  try {
    const site = databaseSite(config.data_dir, config.database.url);
    if (site.kind === 'server') {
      const [{ checkPostgresDatabase }, { checkPgCaptureStore }] = await Promise.all([import('./database-postgres.ts'), import('./capture-store-postgres.ts')]);
      checks.push(...(await checkPostgresDatabase(site.url, { poolMax: config.database.pool_max, directUrl: config.database.direct_url })));
      checks.push(await checkPgCaptureStore(site.url));
    } else {
      checks.push(...(await checkDatabase(site.dataDir)));
      checks.push(await checkCaptureStore(site.dataDir));
    }
    checks.push(await checkCaptureRows(config));
    checks.push(await checkNodes(config));
    checks.push(await checkDuties(config));
    checks.push(await checkNotifications(config));
    checks.push(...(await checkStorage(config)));
  } finally {
    handOver(config.data_dir, owner, { createdSince: started });
  }
  checks.push(checkVpnInterface(config.vpn.cidr));
  checks.push(await checkDiskSpace(config.data_dir, config.server.min_free_mb));
  checks.push(...(await Promise.all([checkServer(config.server), checkUploadHost(config)])));
  return { ok: !checks.some((c) => c.status === 'fail'), config_file: file, data_dir: config.data_dir, checks };
}
