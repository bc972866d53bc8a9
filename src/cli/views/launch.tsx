/**
 * Entry points of the live list views for commands written as plain .ts: each renders its view on
 * the terminal until q, and loads Ink only when called.
 */
import type { App } from '../../services/app.ts';
import { colourEnabled } from './colour.ts';
import { renderUntilExit } from './render.ts';

export async function watchUploads(app: App, opts: { intervalMs: number; list: Parameters<App['uploads']['list']>[0] }): Promise<void> {
  const { UploadsWatch } = await import('./uploads-watch.tsx');
  await renderUntilExit(<UploadsWatch load={() => app.uploads.list(opts.list)} intervalMs={opts.intervalMs} colour={colourEnabled()} />);
}

export async function watchCaptures(app: App, opts: { intervalMs: number; list: Parameters<App['captures']['list']>[0] }): Promise<void> {
  const { CapturesWatch } = await import('./captures-watch.tsx');
  const load = async () => (await app.captures.list(opts.list)).captures;
  await renderUntilExit(<CapturesWatch load={load} intervalMs={opts.intervalMs} colour={colourEnabled()} />);
}
