/**
 * The one entry point of the live terminal views: each function renders its view until q (or the
 * end of an ingest). Commands import this module only when they show a live view. The build bundles
 * it with Ink and React into one file (scripts/bundle-views.mjs): loading Ink's ~500 modules one by
 * one took half a second on a gateway CPU.
 */
import type { ReactElement } from 'react';
import { render } from 'ink';
import type { IncidentView } from '../../services/alerts/list.ts';
import type { CaptureView } from '../../services/captures/service.ts';
import type { RigView } from '../../services/rigs/view.ts';
import type { UploadView } from '../../services/uploads/service.ts';
import { AlertsWatch } from './alerts-watch.tsx';
import { CapturesWatch } from './captures-watch.tsx';
import { colourEnabled } from './colour.ts';
import { IngestWait } from './ingest-wait.tsx';
import type { RigFilter, RigSort } from './rig-list.ts';
import { RigsWatch } from './rigs-watch.tsx';
import { UploadsWatch } from './uploads-watch.tsx';

/** Renders a live view on the terminal until it exits (q, Esc or Ctrl-C). */
async function renderUntilExit(element: ReactElement): Promise<void> {
  const instance = render(element, { exitOnCtrlC: true, patchConsole: false });
  await instance.waitUntilExit();
}

export function watchRigs(opts: { load: () => Promise<RigView[]>; intervalMs: number; filter: RigFilter; sort: RigSort }): Promise<void> {
  return renderUntilExit(<RigsWatch load={opts.load} intervalMs={opts.intervalMs} filter={opts.filter} sort={opts.sort} colour={colourEnabled()} />);
}

export function watchUploads(opts: { load: () => Promise<UploadView[]>; intervalMs: number; empty?: string }): Promise<void> {
  return renderUntilExit(<UploadsWatch load={opts.load} intervalMs={opts.intervalMs} colour={colourEnabled()} empty={opts.empty} />);
}

export function watchCaptures(opts: { load: () => Promise<CaptureView[]>; intervalMs: number; empty?: string }): Promise<void> {
  return renderUntilExit(<CapturesWatch load={opts.load} intervalMs={opts.intervalMs} colour={colourEnabled()} empty={opts.empty} />);
}

export function waitIngest(opts: { load: () => Promise<CaptureView>; intervalMs: number; onDone: (c: CaptureView) => void }): Promise<void> {
  return renderUntilExit(<IngestWait load={opts.load} intervalMs={opts.intervalMs} colour={colourEnabled()} onDone={opts.onDone} />);
}

export function watchAlerts(opts: { load: () => Promise<IncidentView[]>; intervalMs: number }): Promise<void> {
  return renderUntilExit(<AlertsWatch load={opts.load} intervalMs={opts.intervalMs} colour={colourEnabled()} />);
}
