import type { RunOutcome } from '../../jobs/runner.ts';

/**
 * What the rest of rigd tells /metrics, and what /metrics answers. `Metrics` (prom-client) is the
 * real one; `noMetrics` serves commands that answer no scrape, so they never load prom-client.
 */
export interface AppMetrics {
  readonly http: {
    /** One HTTP request answered. */
    request(method: string, route: string, status: number, seconds: number): void;
    /** One rig report stored and answered 200. */
    report(seconds: number): void;
  };
  readonly logins: {
    /** Runs one login, counting it when refused; its result or error is passed on unchanged. */
    count<T>(login: () => Promise<T>): Promise<T>;
  };
  readonly ingest: {
    /** The job runner's hook: one job attempt ended. */
    onOutcome(kind: string, outcome: RunOutcome, seconds: number): void;
  };
  /** Labels every series with `instance`: this node's instance id. */
  setInstance(id: string): void;
  /** The Content-Type of render()'s text. */
  readonly contentType: string;
  /** The whole exposition. */
  render(): Promise<string>;
}

/** Counts nothing (CLI commands). */
export const noMetrics: AppMetrics = {
  http: { request() {}, report() {} },
  logins: { count: (login) => login() },
  ingest: { onOutcome() {} },
  setInstance() {},
  contentType: 'text/plain; version=0.0.4; charset=utf-8',
  render: async () => '',
};
