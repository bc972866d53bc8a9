import { Gauge, type Registry } from 'prom-client';
import type { Reader } from '../../db/reader.ts';
import { uploadTally } from '../../db/uploads.ts';
import type { UploadState } from '../../db/models/upload.ts';
import { sharedRead } from './shared-read.ts';

const UPLOAD_STATES: UploadState[] = ['reserved', 'uploaded', 'expired'];

/** Uploads by state, and their announced bytes, read from the uploads table when scraped. */
export function registerUploadMetrics(registers: Registry[], reader: Reader): void {
  const read = sharedRead(() => uploadTally(reader));
  new Gauge({
    name: 'rigd_uploads',
    help: 'Uploads by state (reserved, uploaded, expired).',
    labelNames: ['state'],
    registers,
    async collect() {
      const by = await read();
      for (const state of UPLOAD_STATES) this.set({ state }, Number(by.get(state)?.n ?? 0));
    },
  });
  new Gauge({
    name: 'rigd_upload_bytes',
    help: 'Sum of the announced sizes of uploads, by state.',
    labelNames: ['state'],
    registers,
    async collect() {
      const by = await read();
      for (const state of UPLOAD_STATES) this.set({ state }, Number(by.get(state)?.bytes ?? 0));
    },
  });
}
