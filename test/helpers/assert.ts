import type { Test } from 'tape';

/** Asserts that p rejects with a message matching re (tape 5 has no t.rejects). */
export async function rejects(t: Test, p: Promise<unknown>, re: RegExp, msg: string): Promise<void> {
  try {
    await p;
    t.fail(`${msg}: did not reject`);
  } catch (err) {
    t.match(err instanceof Error ? err.message : String(err), re, msg);
  }
}
