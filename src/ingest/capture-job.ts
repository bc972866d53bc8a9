/**
 * The capture job's name and payload: what the capture service queues and the ingester runs. Its
 * own module so that queueing a capture (`rigd ingest`) loads nothing of the ingester.
 */
export const CAPTURE_JOB = 'capture';

export interface CaptureJob {
  captureId: number;
}
