import type { Reader } from '../../db/reader.ts';
import { userRows } from '../../db/users.ts';

/** A user as services hand it out: the id is a decimal string, settings are parsed JSON. */
export interface PublicUser {
  id: string;
  username: string;
  email: string;
  admin: boolean;
  rig_ui_settings: unknown;
  created_at: Date;
}

/** Every user, by username (on a plain Reader: the CLI runs it without loading Sequelize). */
export async function listUsers(reader: Reader): Promise<PublicUser[]> {
  const rows = await userRows(reader);
  return rows.map((r) => ({
    id: String(r.id),
    username: r.username,
    email: r.email,
    admin: Boolean(r.is_admin),
    rig_ui_settings: r.rig_ui_settings == null ? null : JSON.parse(r.rig_ui_settings),
    created_at: new Date(r.created_at),
  }));
}
