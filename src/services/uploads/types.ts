/** The shapes the upload service shares with routes, the monitor and captures. */
import type { Transaction } from '../../db/index.ts';
import type { Upload, UploadState } from '../../db/models/upload.ts';

/** What uploads need to know about rigs. */
export interface RigDirectory {
  /** Id of the rig whose reports come from this VPN address, or null. */
  findByVpnAddress(address: string): Promise<string | null>;
  /** Makes `project` the rig's current project, inherited by its later captures. */
  setCurrentProject(rigId: string, project: string, t: Transaction): Promise<void>;
}

/** The seed's upload reservation body. */
export interface Reservation {
  success: true;
  url: string;
  exists: boolean;
  size: number | null;
  id: number;
}

export interface UploadView {
  id: number;
  rig_id: string | null;
  key: string;
  project: string | null;
  state: UploadState;
  size: number;
  bytes_seen: number;
  etag: string | null;
  created_at: string;
  url_expires_at: string;
  completed_at: string | null;
}

/** What the embedded store's PUT route read off the request, besides the key and the body. */
export interface ReceivedPut {
  /** The URL's `reservation` parameter (signed), when it has one. */
  reservation?: string;
  /** The Content-Length header, when the body is not chunked. */
  contentLength?: number;
  /** The Content-Type header, stored with the object. */
  contentType?: string;
  /** Aborted when the upload must stop (the connection went idle); the PUT rejects with its reason. */
  signal?: AbortSignal;
}

/** Told of each completed upload (captures take over capture files: the one hand-over, uploads -> captures). */
export type UploadedListener = (upload: Upload) => Promise<unknown> | void;
