import { createWriteStream } from 'node:fs';
import { rename, unlink } from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { Command } from 'commander';
import { EXPORT_FORMATS, exportTable, isExportFormat, type TableExport } from '../../services/captures/export.ts';
import { removeOnInterrupt } from '../../temp-files.ts';
import { withApp } from '../context.ts';
import { UsageError } from '../fail.ts';
import { outputFile } from '../output-file.ts';
import { parseCaptureId } from './capture-id.ts';

interface ExportOptions {
  format?: string;
  output?: string;
}

/** Writes to a temp name next to FILE, then renames it into place: FILE is whole or untouched. */
async function toFile(out: TableExport, file: string): Promise<void> {
  const tmp = path.join(path.dirname(file), `.${path.basename(file)}.${process.pid}.tmp`);
  const done = removeOnInterrupt(tmp);
  try {
    await pipeline(out.stream, createWriteStream(tmp, { flags: 'wx', mode: 0o640, flush: true }));
    await rename(tmp, file);
  } catch (err) {
    await unlink(tmp).catch(() => undefined);
    throw err;
  } finally {
    done();
  }
}

/** To stdout; a reader that stops early (`| head`) ends the export quietly. */
async function toStdout(out: TableExport): Promise<void> {
  const quiet = (err: NodeJS.ErrnoException) => {
    if (err.code !== 'EPIPE') throw err;
  };
  process.stdout.on('error', () => undefined);
  await pipeline(out.stream, process.stdout, { end: false }).catch(quiet);
}

/** `rigd captures export ID TABLE [--format csv|ndjson] [-o FILE]`: one capture's rows of one table. */
export async function capturesExportCommand(idText: string, table: string, _opts: unknown, cmd: Command): Promise<void> {
  const opts = cmd.optsWithGlobals<ExportOptions>();
  const id = parseCaptureId(idText);
  const format = opts.format ?? 'csv';
  if (!isExportFormat(format)) throw new UsageError(`--format must be one of ${EXPORT_FORMATS.join(', ')}, got ${JSON.stringify(format)}`);
  if (opts.output === '') throw new UsageError('-o needs a file name');
  const file = opts.output !== undefined && opts.output !== '-' ? outputFile('-o', opts.output) : undefined;
  await withApp(cmd, async (app) => {
    const out = await exportTable(app.captures, app.config.data_dir, id, table, format, app.config.database.url, { pageBytes: app.config.captures.export_page_bytes });
    if (file !== undefined) await toFile(out, file);
    else await toStdout(out);
  }, { readOnly: true });
}
