import { QueryTypes } from 'sequelize';
import { loginKey } from '../login-key.ts';
import type { Migration } from './types.ts';

/**
 * Email keys in NFC: an email stored with combining accents gets the key its precomposed form has,
 * so either form finds it. A key another user already holds is left as it was (nothing is lost).
 */
export const emailKeysNfc: Migration = {
  name: '20261127-0401-01-email-keys-nfc',
  async up({ context: qi }) {
    const rows = await qi.sequelize.query<{ id: number; email: string; email_key: string }>('SELECT id, email, email_key FROM users', { type: QueryTypes.SELECT });
    const taken = new Set(rows.map((r) => r.email_key));
    for (const row of rows) {
      const key = loginKey(row.email);
      if (key === row.email_key || taken.has(key)) continue;
      await qi.sequelize.query('UPDATE users SET email_key = :key WHERE id = :id', { replacements: { key, id: row.id } });
      taken.delete(row.email_key);
      taken.add(key);
    }
  },
  async down() {
    // The old keys were the lower-case text as typed; NFC keys find the same users.
  },
};
