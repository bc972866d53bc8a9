/**
 * One writer at a time per store file in this process. A long import holds SQLite's write lock until
 * it commits; a second import queued here waits its turn instead of failing with SQLITE_BUSY when the
 * first outlasts busy_timeout. (Other processes wait on busy_timeout.)
 */
const tails = new Map<string, Promise<void>>();

/** Runs fn once every earlier call for the same key has settled. */
export async function inTurn<T>(key: string, fn: () => Promise<T>): Promise<T> {
  const before = tails.get(key) ?? Promise.resolve();
  let release!: () => void;
  const mine = new Promise<void>((resolve) => (release = resolve));
  const tail = before.then(() => mine);
  tails.set(key, tail);
  await before;
  try {
    return await fn();
  } finally {
    release();
    if (tails.get(key) === tail) tails.delete(key);
  }
}
