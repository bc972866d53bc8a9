/** Work that runs in the background of `rigd serve` (monitors, schedules, the ingester). */
export interface BackgroundTask {
  start(): Promise<void> | void;
  stop(): Promise<void> | void;
}
