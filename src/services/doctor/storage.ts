import { constants } from 'node:fs';
import { access } from 'node:fs/promises';
import path from 'node:path';
import type { Config } from '../../config/schema.ts';
import { createStorage, type Storage } from '../../storage/index.ts';
import { NO_TLS, type MinioStorage } from '../../storage/minio.ts';
import { errorText, fail, ok, warn, type Finding } from './finding.ts';

/** The path MinIO's webhook target must point at (systemd/minio.env.example). */
export const WEBHOOK_PATH = '/api/v1/webhooks/capture_uploaded';

const CREDENTIAL_ERRORS = /InvalidAccessKeyId|SignatureDoesNotMatch|AccessDenied|InvalidToken/;

/** Storage answers with these credentials, the bucket exists, and (MinIO) created objects reach rigd. */
export async function checkStorage(config: Readonly<Config>): Promise<Finding[]> {
  let storage: Storage;
  try {
    storage = createStorage(config);
  } catch (err) {
    return [fail('storage', errorText(err), 'set the storage keys named above in the config file')];
  }
  const where = storage.driver === 'minio' ? `MinIO at ${storage.internal.protocol}//${storage.internal.hostname}:${storage.internal.port}` : `embedded store in ${config.data_dir}/objects`;
  let exists: boolean;
  try {
    if (storage.driver === 'embedded') await embeddedUsable(storage.root);
    exists = await storage.bucketExists();
  } catch (err) {
    const text = errorText(err);
    if (storage.driver === 'minio' && text.includes(NO_TLS)) {
      // An endpoint URL's scheme says whether TLS is used (use_ssl set against it is refused at load).
      const plain = /^https:\/\//i.test(config.storage.minio.endpoint)
        ? `write storage.minio.endpoint: http://${storage.internal.hostname}:${storage.internal.port}`
        : 'set storage.minio.use_ssl: false';
      return [fail('storage', `${where} ${NO_TLS}: it may serve plain HTTP`, `${plain} when MinIO serves plain HTTP; else check MinIO's certificate setup (MINIO_OPTS --certs-dir)`)];
    }
    if (CREDENTIAL_ERRORS.test(text)) {
      return [fail('storage', `${where} refuses rigd's credentials: ${text}`, 'set storage.minio.access_key and secret_key to a MinIO user with access to the bucket')];
    }
    const fix =
      storage.driver === 'minio'
        ? `start MinIO (systemctl start minio) or correct storage.minio.endpoint and port`
        : `give the rigd user write access to ${config.data_dir}/objects`;
    return [fail('storage', `${where} cannot be reached: ${text}`, fix)];
  }
  const findings = [ok('storage', `${where} answers${storage.driver === 'minio' ? ' and accepts the credentials' : ''}`)];
  if (!exists) {
    const how = storage.driver === 'minio' ? `mc mb ALIAS/${storage.bucket}, or start rigd serve (it creates the bucket)` : 'start rigd serve (it creates the bucket)';
    findings.push(fail('bucket', `bucket ${storage.bucket} does not exist`, how));
    return findings;
  }
  findings.push(ok('bucket', `bucket ${storage.bucket} exists`));
  findings.push(storage.driver === 'minio' ? await checkWebhook(storage, config) : ok('webhook', 'not needed: the embedded store queues captures itself'));
  findings.push(storage.driver === 'minio' ? await checkVersions(storage) : ok('versions', "the embedded store keeps a queued capture's version until its job ends"));
  return findings;
}

/**
 * Whether a queued capture is ingested from the version that was queued: on a versioned bucket it is
 * read by its version id; on an unversioned one a rig that overwrites its key before the job reads it
 * makes that capture fail object_changed (the new version is queued as a capture of its own).
 */
async function checkVersions(storage: MinioStorage): Promise<Finding> {
  try {
    if (await storage.bucketVersioned()) return ok('versions', `bucket ${storage.bucket} is versioned: a queued capture is read by its version id, whatever is PUT to its key after`);
  } catch (err) {
    return warn('versions', `cannot read the versioning config of ${storage.bucket}: ${errorText(err)}`, "give rigd's MinIO user s3:GetBucketVersioning on the bucket");
  }
  return warn(
    'versions',
    `bucket ${storage.bucket} is not versioned: a capture whose key is overwritten before its job reads it fails object_changed (the new version is ingested as a capture of its own)`,
    `mc version enable ALIAS/${storage.bucket} (and a lifecycle rule expiring noncurrent versions, e.g. mc ilm rule add --noncurrent-expire-days 7 ALIAS/${storage.bucket})`,
  );
}

/**
 * The embedded store's objects/ can be used, asked without writing anything (its ping would create
 * objects/ and the storage credentials): when objects/ is missing, rigd serve can create it.
 */
async function embeddedUsable(root: string): Promise<void> {
  try {
    await access(root, constants.R_OK | constants.W_OK | constants.X_OK);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw new Error(`${root} is not usable: ${errorText(err)}`);
    await access(path.dirname(root), constants.W_OK | constants.X_OK).catch((e: unknown) => {
      throw new Error(`${root} is missing and cannot be created: ${errorText(e)}`);
    });
  }
}

/**
 * MinIO's bucket notification sends created objects to a webhook target, and rigd's webhook answers
 * with the configured token. (MinIO's target settings themselves live in its environment and admin API;
 * the bucket's notification config is what S3 clients can read.)
 */
async function checkWebhook(storage: MinioStorage, config: Readonly<Config>): Promise<Finding> {
  if (!config.ingest.webhook_token) {
    return fail('webhook', 'ingest.webhook_token is empty: MinIO cannot authenticate its events', 'set ingest.webhook_token and the same value as MINIO_NOTIFY_WEBHOOK_AUTH_TOKEN_RIGD in /etc/default/minio');
  }
  let targets: string[];
  try {
    targets = await storage.createdObjectTargets();
  } catch (err) {
    return fail('webhook', `cannot read the notification config of ${storage.bucket}: ${errorText(err)}`, 'give rigd\'s MinIO user s3:GetBucketNotification on the bucket');
  }
  const webhook = targets.filter((arn) => arn.endsWith(':webhook'));
  if (webhook.length === 0) {
    return fail('webhook', `bucket ${storage.bucket} sends no created-object events to a webhook`, `mc event add ALIAS/${storage.bucket} arn:minio:sqs::RIGD:webhook --event put`);
  }
  const url = `http://127.0.0.1:${config.server.port}${WEBHOOK_PATH}`;
  try {
    const res = await fetch(url, {
      method: 'POST',
      headers: { authorization: `Bearer ${config.ingest.webhook_token}`, 'content-type': 'application/json' },
      body: '{}',
      signal: AbortSignal.timeout(3000),
    });
    if (res.status === 401 || res.status === 403) {
      return fail('webhook', `${url} refuses ingest.webhook_token (${res.status})`, 'make MINIO_NOTIFY_WEBHOOK_AUTH_TOKEN_RIGD and ingest.webhook_token equal, then restart both');
    }
    return ok('webhook', `${storage.bucket} notifies ${webhook.join(', ')}; ${url} answers and accepts the token`);
  } catch (err) {
    return warn('webhook', `${storage.bucket} notifies ${webhook.join(', ')}, but ${url} does not answer (${errorText(err)})`, 'start rigd serve; MinIO keeps events in its queue_dir meanwhile');
  }
}
