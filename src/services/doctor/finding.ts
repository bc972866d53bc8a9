/** One line of `rigd doctor`: a check's outcome and, for warn and fail, the fix to apply. */
export type CheckStatus = 'ok' | 'warn' | 'fail';

export interface Finding {
  check: string;
  status: CheckStatus;
  message: string;
  /** What to do about a warn or fail. */
  fix?: string;
}

export const ok = (check: string, message: string): Finding => ({ check, status: 'ok', message });
export const warn = (check: string, message: string, fix: string): Finding => ({ check, status: 'warn', message, fix });
export const fail = (check: string, message: string, fix: string): Finding => ({ check, status: 'fail', message, fix });

export function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
