import { Box, Text, useApp, useInput, useStdin } from 'ink';
import type { IncidentView } from '../../services/alerts/list.ts';
import { terminalText } from '../terminal-text.ts';
import { fitAndAlign } from './columns.ts';
import { dateText } from '../../services/date-text.ts';
import { usePoll } from './use-poll.ts';
import { useTerminalWidth } from './use-width.ts';

export interface AlertsWatchProps {
  load: () => Promise<IncidentView[]>;
  intervalMs: number;
  colour: boolean;
}

const HEADER = ['ID', 'STATE', 'KIND', 'SUBJECT', 'OPENED', 'RESOLVED', 'WHAT'];
/** Per column: 0 always shown; on a narrow terminal the highest number goes first. */
const PRIORITY = [0, 0, 0, 1, 3, 4, 2];
const FLOORS = [Infinity, Infinity, Infinity, undefined, Infinity, Infinity, 20];
const STATE_COLOUR: Record<IncidentView['state'], string> = { open: 'red', acked: 'yellow', resolved: 'gray' };

/** `rigd alerts --watch`: open incidents, then those resolved in the last 24 h, refreshed every interval; q quits. */
export function AlertsWatch({ load, intervalMs, colour }: AlertsWatchProps) {
  const { exit } = useApp();
  const { isRawModeSupported } = useStdin();
  const polled = usePoll(load, intervalMs);
  const width = useTerminalWidth();
  useInput((input, key) => (input === 'q' || key.escape) && exit(), { isActive: isRawModeSupported === true });
  if (!polled.data) return <Text>{polled.error ? `rigd: ${terminalText(polled.error.message)}` : 'loading incidents…'}</Text>;
  const incidents = polled.data;
  const open = incidents.filter((i) => i.state !== 'resolved').length;
  const lines = fitAndAlign(
    [HEADER, ...incidents.map((i) => [String(i.id), i.state, i.kind, i.subject ?? '-', i.opened_at, i.resolved_at ?? '-', i.text].map((c) => terminalText(c)))],
    PRIORITY,
    width,
    FLOORS,
  );
  return (
    <Box flexDirection="column">
      <Text bold={colour}>{`${open} open incidents · ${incidents.length - open} resolved in the last 24 h`}</Text>
      <Text> </Text>
      <Text bold={colour} wrap="truncate">
        {lines[0]}
      </Text>
      {incidents.map((i, k) => (
        <Text key={i.id} wrap="truncate" color={colour ? STATE_COLOUR[i.state] : undefined}>
          {lines[k + 1]}
        </Text>
      ))}
      {incidents.length === 0 ? <Text>no open incident, none resolved in the last 24 h</Text> : null}
      <Text> </Text>
      <Text dimColor={colour}>{`updated ${polled.at ? dateText(polled.at, 'clock') : ''} · every ${intervalMs / 1000} s${isRawModeSupported ? ' · q: quit' : ''}`}</Text>
      {polled.error ? <Text>{`rigd: refresh failed: ${terminalText(polled.error.message)}`}</Text> : null}
    </Box>
  );
}
