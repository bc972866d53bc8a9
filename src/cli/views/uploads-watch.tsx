import { Box, Text, useApp, useInput, useStdin } from 'ink';
import type { UploadView } from '../../services/uploads/service.ts';
import { terminalText } from '../terminal-text.ts';
import { fitAndAlign } from './columns.ts';
import { formatBytes, progressBar } from './progress-bar.ts';
import { usePoll } from './use-poll.ts';
import { useTerminalWidth } from './use-width.ts';
import { dateText } from '../../services/date-text.ts';
import { timeAgo } from '../../services/time-ago.ts';

export interface UploadsWatchProps {
  load: () => Promise<UploadView[]>;
  intervalMs: number;
  colour: boolean;
  /** Said while the list is empty: the filters it was asked with (default "no uploads yet"). */
  empty?: string;
  /** Clock for "reserved ... ago" (tests fix it). */
  now?: () => Date;
}

const HEADER = ['ID', 'STATE', 'RIG', 'KEY', 'PROGRESS', 'RESERVED'];
/** Per column: 0 always shown; on a narrow terminal the highest number goes first. */
const PRIORITY = [0, 0, 2, 1, 0, 3];
/** Per column: how narrow it may be shortened (the progress bar and its percentage take 25 cells, then a cut), see fitLayout. */
const FLOORS = [Infinity, Infinity, undefined, 16, 27, Infinity];

const STATE_COLOUR: Record<string, string> = { reserved: 'cyan', uploaded: 'green', expired: 'gray' };

/** Progress of one upload: a bar while bytes arrive, else its outcome. */
export function uploadProgress(u: UploadView): string {
  const sizes = `${formatBytes(u.bytes_seen)} / ${formatBytes(u.size)}`;
  if (u.state === 'uploaded') return `${progressBar(u.size, u.size)}  ${formatBytes(u.size)}`;
  if (u.state === 'expired') return `${progressBar(u.bytes_seen, u.size)}  ${sizes} (expired)`;
  return `${progressBar(u.bytes_seen, u.size)}  ${sizes}`;
}

/** `rigd uploads --watch`: recent uploads with a progress bar each, refreshed every interval; q quits. */
export function UploadsWatch({ load, intervalMs, colour, empty = 'no uploads yet', now = () => new Date() }: UploadsWatchProps) {
  const { exit } = useApp();
  const { isRawModeSupported } = useStdin();
  const polled = usePoll(load, intervalMs);
  const width = useTerminalWidth();
  useInput((input, key) => (input === 'q' || key.escape) && exit(), { isActive: isRawModeSupported === true });
  if (!polled.data) return <Text>{polled.error ? `rigd: ${terminalText(polled.error.message)}` : 'loading uploads…'}</Text>;
  const uploads = polled.data;
  const counts = new Map<string, number>();
  for (const u of uploads) counts.set(u.state, (counts.get(u.state) ?? 0) + 1);
  const inFlight = uploads.filter((u) => u.state === 'reserved' && u.bytes_seen > 0).length;
  const at = now();
  const lines = fitAndAlign(
    [HEADER, ...uploads.map((u) => [String(u.id), u.state, u.rig_id ?? '-', u.key, uploadProgress(u), timeAgo(new Date(u.created_at), at)])],
    PRIORITY,
    width,
    FLOORS,
  );
  const summary = ['reserved', 'uploaded', 'expired'].map((s) => `${counts.get(s) ?? 0} ${s}`).join(', ');
  return (
    <Box flexDirection="column">
      <Text bold={colour}>{`${uploads.length} recent uploads: ${summary} · ${inFlight} receiving bytes`}</Text>
      <Text> </Text>
      <Text bold={colour} wrap="truncate">
        {lines[0]}
      </Text>
      {uploads.map((u, i) => (
        <Text key={u.id} wrap="truncate" color={colour ? STATE_COLOUR[u.state] : undefined}>
          {lines[i + 1]}
        </Text>
      ))}
      {uploads.length === 0 ? <Text>{terminalText(empty)}</Text> : null}
      <Text> </Text>
      <Text dimColor={colour}>{`updated ${polled.at ? dateText(polled.at, 'clock') : ''} · every ${intervalMs / 1000} s${isRawModeSupported ? ' · q: quit' : ''}`}</Text>
      {polled.error ? <Text>{`rigd: refresh failed: ${terminalText(polled.error.message)}`}</Text> : null}
    </Box>
  );
}
