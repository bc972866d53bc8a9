/**
 * Times on the terminal: relative in tables ("3 minutes ago", date-fns formatDistance); absolute ones
 * carry their zone, "12:00:01 UTC" (in --json every time is ISO 8601 in UTC: 2026-11-23T12:00:01.000Z).
 */
export function clockTime(at: Date): string {
  return at.toLocaleTimeString('en-GB', { hour: '2-digit', minute: '2-digit', second: '2-digit', timeZoneName: 'short' });
}
