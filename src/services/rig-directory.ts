import type { Transaction } from 'sequelize';
import type { Database } from '../db/index.ts';
import type { RigDirectory } from './uploads.ts';

/** Rigs as uploads see them: found by the VPN address they report from. */
export function rigDirectory(db: Database): RigDirectory {
  const { Rig } = db.models;
  return {
    async findByVpnAddress(address: string) {
      const rig = await Rig.findOne({ where: { vpn_address: address }, order: [['last_seen_at', 'DESC']], attributes: ['id'] });
      return rig ? rig.id : null;
    },
    async setCurrentProject(rigId: string, project: string, t: Transaction) {
      await Rig.update({ current_project: project }, { where: { id: rigId }, transaction: t });
    },
  };
}
