import { Box, Text, useApp } from 'ink';
import { useEffect } from 'react';
import type { CaptureView } from '../../services/captures/service.ts';
import { terminalText } from '../terminal-text.ts';
import { captureProgress } from './capture-text.ts';
import { progressBar } from './progress-bar.ts';
import { usePoll } from './use-poll.ts';

export interface IngestWaitProps {
  load: () => Promise<CaptureView>;
  intervalMs: number;
  colour: boolean;
  /** Called once with the capture when it is ingested or failed; the view then exits. */
  onDone: (capture: CaptureView) => void;
}

/** Steps after the download, in order (for the overall bar). */
const STEPS = ['download', 'inspect', 'record'];

function overall(c: CaptureView): number {
  if (c.state === 'ingested' || c.state === 'failed') return 1;
  const p = c.progress;
  if (c.state !== 'ingesting' || !p) return 0;
  const step = Math.max(0, STEPS.findIndex((s) => p.step.startsWith(s)));
  const within = p.step === 'download' && p.total ? p.bytes / p.total : 0;
  return (step + within) / STEPS.length;
}

/** `rigd ingest --wait` on a terminal: one capture's progress until it is ingested or failed. */
export function IngestWait({ load, intervalMs, colour, onDone }: IngestWaitProps) {
  const { exit } = useApp();
  const { data: c, error } = usePoll(load, intervalMs);
  const finished = c !== undefined && (c.state === 'ingested' || c.state === 'failed');
  useEffect(() => {
    if (c && finished) {
      onDone(c);
      exit();
    }
  }, [c, finished, onDone, exit]);
  if (!c) return <Text>{error ? `rigd: ${terminalText(error.message)}` : 'loading…'}</Text>;
  const colourOf = c.state === 'failed' ? 'red' : c.state === 'ingested' ? 'green' : 'yellow';
  return (
    <Box flexDirection="column">
      <Text>
        {`capture ${c.id} (${terminalText(c.key)}) `}
        <Text color={colour ? colourOf : undefined}>{c.state}</Text>
        {c.attempts > 1 ? ` · attempt ${c.attempts}` : ''}
      </Text>
      <Text>{`${progressBar(Math.round(overall(c) * 1000), 1000, 30)}  ${terminalText(captureProgress(c))}`}</Text>
    </Box>
  );
}
