import type { Reader } from '../../db/reader.ts';
import { rigRows } from '../../db/rigs/listing.ts';
import { compareRigIds, type RigStatus } from './status.ts';
import { rigView, type RigConfig, type RigView } from './view.ts';

/**
 * Every rig in natural id order (rig2 before rig10) with its status computed now, optionally only
 * one status. Reads only the rigs table (on a plain Reader: the CLI runs it without loading Sequelize).
 */
export async function listRigs(reader: Reader, config: RigConfig, now: Date, status?: RigStatus): Promise<RigView[]> {
  const rows = await rigRows(reader);
  const views = rows.map((r) => rigView(r, config, now)).sort((a, b) => compareRigIds(a.id, b.id));
  return status ? views.filter((v) => v.status === status) : views;
}
