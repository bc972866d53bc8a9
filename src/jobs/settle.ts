/** Resolves or rejects with p; if signal aborts first, rejects with its reason once graceMs has passed. */
export function settleWithin<T>(p: Promise<T>, signal: AbortSignal, graceMs: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let grace: NodeJS.Timeout | undefined;
    const onAbort = () => {
      grace = setTimeout(() => reject(signal.reason), graceMs);
    };
    const done = () => {
      clearTimeout(grace);
      signal.removeEventListener('abort', onAbort);
    };
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
    p.then(
      (v) => (done(), resolve(v)),
      (e) => (done(), reject(e)),
    );
  });
}
