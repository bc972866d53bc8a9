import type { Config } from '../../config/schema.ts';
import type { Reader } from '../../db/reader.ts';
import { rigRow } from '../../db/rigs/listing.ts';
import { NotFound } from '../../errors.ts';
import { parseRigId } from './report-input.ts';
import { rigView, type RigView } from './view.ts';

/** "rig X not found", X shown printable and short whatever was asked for. */
export function rigNotFound(rawId: string): NotFound {
  const shown = rawId.replace(/\p{C}/gu, '?');
  return new NotFound(`rig ${shown.length > 80 ? `${shown.slice(0, 80)}...` : shown}`, 'rig_not_found');
}

/** One rig with its status computed at `now`, or null (also for an id no rig can have). */
export async function findRig(reader: Reader, config: Pick<Config, 'rigs' | 'vpn' | 'alerts'>, rawId: string, now: Date): Promise<RigView | null> {
  let id: string;
  try {
    id = parseRigId(rawId);
  } catch {
    return null; // not a DNS label: no rig can have it
  }
  const row = await rigRow(reader, id);
  return row ? rigView(row, config, now) : null;
}
