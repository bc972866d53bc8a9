import { Box, Text, useApp, useInput, useStdin } from 'ink';
import type { CaptureView } from '../../services/captures/service.ts';
import { terminalText } from '../terminal-text.ts';
import { fitAndAlign } from './columns.ts';
import { captureProgress } from './capture-text.ts';
import { usePoll } from './use-poll.ts';
import { useTerminalWidth } from './use-width.ts';
import { dateText } from '../../services/date-text.ts';
import { timeAgo } from '../../services/time-ago.ts';

export interface CapturesWatchProps {
  load: () => Promise<CaptureView[]>;
  intervalMs: number;
  colour: boolean;
  /** Said while the list is empty: the filters it was asked with (default "no captures yet"). */
  empty?: string;
  /** Clock for "updated ... ago" (tests fix it). */
  now?: () => Date;
}

const HEADER = ['ID', 'STATE', 'RIG', 'PROJECT', 'KEY', 'PROGRESS / RESULT', 'UPDATED'];
/** Per column: 0 always shown; on a narrow terminal the highest number goes first. */
const PRIORITY = [0, 0, 3, 4, 1, 0, 2];
/** Per column: how narrow it may be shortened (a progress bar and its percentage take 25 cells, then a cut), see fitLayout. */
const FLOORS = [Infinity, Infinity, undefined, undefined, 16, 27, Infinity];

const STATE_COLOUR: Record<string, string> = { uploaded: 'gray', queued: 'cyan', ingesting: 'yellow', ingested: 'green', failed: 'red' };

/** `rigd captures --watch`: captures and their ingestion, a progress bar while downloading; q quits. */
export function CapturesWatch({ load, intervalMs, colour, empty = 'no captures yet', now = () => new Date() }: CapturesWatchProps) {
  const { exit } = useApp();
  const { isRawModeSupported } = useStdin();
  const polled = usePoll(load, intervalMs);
  const width = useTerminalWidth();
  useInput((input, key) => (input === 'q' || key.escape) && exit(), { isActive: isRawModeSupported === true });
  if (!polled.data) return <Text>{polled.error ? `rigd: ${terminalText(polled.error.message)}` : 'loading captures…'}</Text>;
  const captures = polled.data;
  const counts = new Map<string, number>();
  for (const c of captures) counts.set(c.state, (counts.get(c.state) ?? 0) + 1);
  const at = now();
  const lines = fitAndAlign(
    [
      HEADER,
      ...captures.map((c) => [String(c.id), c.state, c.rig_id ?? '-', c.project ?? '', c.key, captureProgress(c), timeAgo(new Date(c.updated_at), at)]),
    ],
    PRIORITY,
    width,
    FLOORS,
  );
  const summary = ['queued', 'ingesting', 'ingested', 'failed'].map((s) => `${counts.get(s) ?? 0} ${s}`).join(', ');
  return (
    <Box flexDirection="column">
      <Text bold={colour}>{`${captures.length} recent captures: ${summary}`}</Text>
      <Text> </Text>
      <Text bold={colour} wrap="truncate">
        {lines[0]}
      </Text>
      {captures.map((c, i) => (
        <Text key={c.id} wrap="truncate" color={colour ? STATE_COLOUR[c.state] : undefined}>
          {lines[i + 1]}
        </Text>
      ))}
      {captures.length === 0 ? <Text>{terminalText(empty)}</Text> : null}
      <Text> </Text>
      <Text dimColor={colour}>{`updated ${polled.at ? dateText(polled.at, 'clock') : ''} · every ${intervalMs / 1000} s${isRawModeSupported ? ' · q: quit' : ''}`}</Text>
      {polled.error ? <Text>{`rigd: refresh failed: ${terminalText(polled.error.message)}`}</Text> : null}
    </Box>
  );
}
