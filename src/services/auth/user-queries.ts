import type { Reader } from '../../db/reader.ts';

/** A user as services hand it out: the id is a decimal string, settings are parsed JSON. */
export interface PublicUser {
  id: string;
  username: string;
  email: string;
  admin: boolean;
  rig_ui_settings: unknown;
  created_at: Date;
}

interface UserRow {
  id: number;
  username: string;
  email: string;
  is_admin: number | boolean;
  rig_ui_settings: string | null;
  created_at: string | Date;
}

/** Every user, by username. Plain SQL: the CLI runs it without loading Sequelize. */
export async function listUsers(reader: Reader): Promise<PublicUser[]> {
  const rows = await reader.all<UserRow>(
    'SELECT id, username, email, is_admin, rig_ui_settings, created_at FROM users ORDER BY username_key',
  );
  return rows.map((r) => ({
    id: String(r.id),
    username: r.username,
    email: r.email,
    admin: Boolean(r.is_admin),
    rig_ui_settings: r.rig_ui_settings == null ? null : JSON.parse(r.rig_ui_settings),
    created_at: new Date(r.created_at),
  }));
}
