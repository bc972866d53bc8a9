// The webhook's world in tests: a server with a webhook token, a user with a token, a capture in
// storage; POST /api/v1/webhooks/capture_uploaded and MinIO bucket notifications as MinIO sends them.
import path from 'node:path';
import { putFile } from './captures.ts';
import { makeCapture, type MadeCapture } from './capture-files.ts';
import { http } from './http.ts';
import { startServer, userWithToken, type TestServer } from './server.ts';

export const WEBHOOK_TOKEN = 'minio-webhook-secret-0123456789';
/** A MinIO bucket notification as its webhook target posts it. */
export function minioEvent(key: string, etag: string, size: number, bucket = 'captures', eventName = 's3:ObjectCreated:Put') {
  const encoded = encodeURIComponent(key).replace(/%20/g, '+').replace(/%2F/g, '/');
  return {
    EventName: eventName,
    Key: `${bucket}/${encoded}`,
    Records: [
      {
        eventVersion: '2.0',
        eventSource: 'minio:s3',
        awsRegion: '',
        eventTime: new Date().toISOString(),
        eventName,
        userIdentity: { principalId: 'rig' },
        requestParameters: { sourceIPAddress: '10.144.0.7' },
        responseElements: {},
        s3: {
          s3SchemaVersion: '1.0',
          configurationId: 'Config',
          bucket: { name: bucket, ownerIdentity: { principalId: 'rig' }, arn: `arn:aws:s3:::${bucket}` },
          object: { key: encoded, size, eTag: etag, contentType: 'application/octet-stream', sequencer: '17A0' },
        },
      },
    ],
  };
}

export interface WebhookWorld {
  s: TestServer;
  ana: { id: string; token: string };
  made: MadeCapture;
  /** The storage's base URL (object URLs are `${base}/captures/<key>`). */
  base: string;
  /** POSTs body to the webhook. */
  hook(body: unknown, headers?: Record<string, string>): ReturnType<typeof http>;
}

/** A server with ingest.webhook_token, the user ana with a token, and rig1/a.sqlite in storage. */
export async function webhookWorld(files: string): Promise<WebhookWorld> {
  const s = await startServer({ ingest: { webhook_token: WEBHOOK_TOKEN } });
  const base = s.app.storage.objectUrl('x').replace(/\/captures\/x$/, '');
  const ana = await userWithToken(s, 'ana');
  const made = await makeCapture(path.join(files, 'a.sqlite'));
  await putFile(s.app, 'rig1/a.sqlite', made.path);
  const hook = (body: unknown, headers: Record<string, string> = {}) =>
    http(`${s.url}/api/v1/webhooks/capture_uploaded`, { json: body, headers: { accept: 'application/json', ...headers } });
  return { s, ana, made, base, hook };
}
