import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { ConfigError } from '../errors.ts';

/** The largest config file read: a real one is a few KiB; anything bigger is a mistake, refused before parsing. */
export const MAX_CONFIG_BYTES = 1024 * 1024;

/**
 * The config file's text, read no further than the cap (a device or a FIFO has no size to check
 * first). Throws ConfigError over the cap, the file system's error when it cannot be read.
 */
export function readConfigText(file: string): string {
  const fd = openSync(file, 'r');
  try {
    const size = fstatSync(fd).size;
    if (size > MAX_CONFIG_BYTES) throw new ConfigError(tooLarge(file, size));
    const buf = Buffer.alloc(MAX_CONFIG_BYTES + 1);
    let n = 0;
    for (let got = -1; got !== 0 && n < buf.length; n += got) got = readSync(fd, buf, n, buf.length - n, null);
    if (n > MAX_CONFIG_BYTES) throw new ConfigError(tooLarge(file, null));
    return buf.subarray(0, n).toString('utf8');
  } finally {
    closeSync(fd);
  }
}

function tooLarge(file: string, size: number | null): string {
  const what = size === null ? 'more than 1 MiB' : `${(size / 1024 / 1024).toFixed(1)} MiB`;
  return `config: ${file} is ${what}; a config file is at most 1 MiB (is it the right file?)`;
}

