/**
 * The uploads table's statements besides reservations (reservations.ts) and the per-rig bounds
 * (upload-bounds.ts): listings, the storage poll's picks and every change of an upload's state.
 * Services hand it plain values and get typed rows back.
 */
import type { Reader } from './reader.ts';
import type { StoredTime } from './stored-time.ts';
import type { UploadState } from './models/upload.ts';

/** An upload as a rig's page lists it. */
export interface RigUploadRow {
  id: number;
  key: string;
  state: UploadState;
  expected_size: number;
  bytes_seen: number;
  project: string | null;
  created_at: StoredTime;
  completed_at: StoredTime | null;
}

/** A rig's newest uploads (highest id first), at most `limit`, and how many it has in all. */
export async function rigUploads(reader: Reader, rigId: string, limit: number): Promise<{ total: number; recent: RigUploadRow[] }> {
  const [recent, count] = await Promise.all([
    reader.all<RigUploadRow>('SELECT id, key, state, expected_size, bytes_seen, project, created_at, completed_at FROM uploads WHERE rig_id = ? ORDER BY id DESC LIMIT ?', [rigId, limit]),
    reader.all<{ n: number }>('SELECT COUNT(*) AS n FROM uploads WHERE rig_id = ?', [rigId]),
  ]);
  return { total: Number(count[0]?.n ?? 0), recent };
}
