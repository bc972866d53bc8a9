/**
 * Shared state of a test file (a server, network namespaces), built by the first test that asks for it
 * and then reused. A build that fails fails that test and every later one, each naming the cause; it
 * is never a test of its own that can only pass.
 */
export function fixture<T>(build: () => Promise<T>): () => Promise<T> {
  let built: Promise<T> | undefined;
  return () => (built ??= build());
}
