/**
 * How Sequelize writes DATE columns ("2026-11-23 07:37:30.123 +00:00"), so a text comparison in
 * SQLite is a time comparison (PostgreSQL reads the same text as a timestamptz).
 */
export function sqlTime(d: Date): string {
  return `${d.toISOString().replace('T', ' ').replace('Z', '')} +00:00`;
}

/** A time column as a driver hands it back (SQLite: text; PostgreSQL: a Date). */
export type StoredTime = string | Date;
