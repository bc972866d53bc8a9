/** What a receiver answered to one delivery attempt, and whether trying again could help. */
export interface Answer {
  /** The receiver took it (HTTP 2xx, SMTP 2xx). */
  ok: boolean;
  /** Trying again cannot help (HTTP 400/401/403/404/410, an SMTP 5xx refusal, a target no longer configured). */
  permanent: boolean;
  /** Status and first line of the body, the SMTP response, or the error: one line. */
  text: string;
}

/** One line of at most max characters, control characters dropped (a receiver's answer is printed and logged). */
export function oneLine(text: string, max = 200): string {
  const first = text.split(/\r?\n/).find((l) => l.trim() !== '') ?? '';
  // eslint-disable-next-line no-control-regex
  const clean = first.replace(/[\u0000-\u001f\u007f-\u009f]/g, ' ').trim();
  return clean.length > max ? `${clean.slice(0, max - 1)}…` : clean;
}

/** The text of a failure to reach the receiver (no answer): undici's and nodemailer's codes kept. */
export function errorLine(err: unknown): string {
  if (!(err instanceof Error)) return oneLine(String(err));
  const cause = (err as Error & { cause?: unknown }).cause;
  const code = (err as Error & { code?: unknown }).code ?? (cause instanceof Error ? (cause as Error & { code?: unknown }).code : undefined);
  const message = cause instanceof Error && cause.message && err.message === 'fetch failed' ? cause.message : err.message || err.name;
  return oneLine(typeof code === 'string' && !message.includes(code) ? `${code}: ${message}` : message);
}
