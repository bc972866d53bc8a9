import type { Command } from 'commander';
import { showCapture } from '../../services/captures/show.ts';
import { printJson, withApp } from '../context.ts';
import { captureDetailText } from '../views/capture-detail-text.ts';
import { parseCaptureId } from './capture-id.ts';

/** `rigd captures show ID [--json]`: one capture, its ingestion and its tables. */
export async function capturesShowCommand(idText: string, _opts: unknown, cmd: Command): Promise<void> {
  const { json } = cmd.optsWithGlobals<{ json?: boolean }>();
  const id = parseCaptureId(idText);
  const detail = await withApp(cmd, (app) => showCapture(app.captures, id), { readOnly: true });
  if (json) return printJson(detail);
  process.stdout.write(captureDetailText(detail));
}
