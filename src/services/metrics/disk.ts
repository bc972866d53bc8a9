import { statfs } from 'node:fs/promises';
import path from 'node:path';
import { Gauge, type Registry } from 'prom-client';
import { sharedRead } from './shared-read.ts';

/** Space on the file system of data_dir, read with statfs when scraped (NaN when it cannot be read). */
export function registerDiskMetrics(registers: Registry[], dataDir: string): void {
  const dir = path.resolve(dataDir);
  const read = sharedRead(() => statfs(dir).catch(() => null));
  new Gauge({
    name: 'rigd_data_dir_free_bytes',
    help: 'Bytes free for rigd on the file system that holds data_dir (what an unprivileged writer may use).',
    registers,
    async collect() {
      const st = await read();
      this.set(st ? st.bavail * st.bsize : Number.NaN);
    },
  });
  new Gauge({
    name: 'rigd_data_dir_size_bytes',
    help: 'Size of the file system that holds data_dir.',
    registers,
    async collect() {
      const st = await read();
      this.set(st ? st.blocks * st.bsize : Number.NaN);
    },
  });
}
