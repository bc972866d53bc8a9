import type { ReactElement } from 'react';

/**
 * Renders a live view on the terminal until it exits (q, Esc or Ctrl-C). Ink is imported here, so
 * only watching commands pay for loading it.
 */
export async function renderUntilExit(element: ReactElement): Promise<void> {
  const { render } = await import('ink');
  const instance = render(element, { exitOnCtrlC: true, patchConsole: false });
  await instance.waitUntilExit();
}
