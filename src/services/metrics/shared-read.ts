/**
 * One read shared by the gauges of a scrape: prom-client collects every metric at once, so the
 * gauges fed by the same query await the same call instead of running it once each. A call made
 * after the last one settled reads again.
 */
export function sharedRead<T>(read: () => Promise<T>): () => Promise<T> {
  let inFlight: Promise<T> | undefined;
  return () => {
    inFlight ??= read().finally(() => {
      inFlight = undefined;
    });
    return inFlight;
  };
}
