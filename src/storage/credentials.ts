/**
 * The access key id and secret the embedded store signs its URLs with, kept in
 * `<data_dir>/storage-credentials.json` (mode 0600) and shared by every process on the same data_dir.
 */
import { randomBytes } from 'node:crypto';
import { closeSync, fsyncSync, linkSync, mkdirSync, openSync, readFileSync, unlinkSync, writeSync } from 'node:fs';
import path from 'node:path';
import { Unavailable } from '../errors.ts';
import type { SigV4Credentials } from './sigv4.ts';

/** Region the embedded store signs for (any fixed value works; this is MinIO's default). */
export const EMBEDDED_REGION = 'us-east-1';
export const CREDENTIALS_FILE = 'storage-credentials.json';

const errno = (err: unknown): string | undefined => (err as NodeJS.ErrnoException | null)?.code;

interface CredentialsFile {
  access_key: string;
  secret_key: string;
}

/** Reads `<dataDir>/storage-credentials.json`, creating it (0600, atomically, first writer wins) when missing. */
export function loadOrCreateCredentials(dataDir: string): SigV4Credentials {
  const file = path.join(dataDir, CREDENTIALS_FILE);
  const read = (): SigV4Credentials | null => {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (err) {
      if (errno(err) === 'ENOENT') return null;
      throw new Unavailable(`cannot read ${file}: ${(err as Error).message}`);
    }
    const parsed = JSON.parse(text) as Partial<CredentialsFile>;
    if (typeof parsed.access_key !== 'string' || typeof parsed.secret_key !== 'string' || !parsed.access_key || !parsed.secret_key) {
      throw new Unavailable(`${file} is malformed: expected {"access_key": "...", "secret_key": "..."}`);
    }
    return { accessKey: parsed.access_key, secretKey: parsed.secret_key, region: EMBEDDED_REGION };
  };
  const existing = read();
  if (existing) return existing;
  mkdirSync(dataDir, { recursive: true });
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
  const accessKey = 'RIGD' + [...randomBytes(16)].map((b) => alphabet[b & 31]).join('');
  const secretKey = randomBytes(30).toString('base64url');
  const content: CredentialsFile = { access_key: accessKey, secret_key: secretKey };
  const tmp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  const fd = openSync(tmp, 'wx', 0o600);
  try {
    writeSync(fd, JSON.stringify(content, null, 2) + '\n');
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  try {
    linkSync(tmp, file); // fails when another process got there first; then its file wins
  } catch (err) {
    if (errno(err) !== 'EEXIST') throw err;
  } finally {
    unlinkSync(tmp);
  }
  const created = read();
  if (!created) throw new Unavailable(`cannot create ${file}`);
  return created;
}
