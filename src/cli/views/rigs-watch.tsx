import { Box, Text, useApp, useInput, useStdin } from 'ink';
import { useState } from 'react';
import type { RigView } from '../../services/rigs/view.ts';
import { terminalText } from '../terminal-text.ts';
import { fitAndAlign } from './columns.ts';
import { RIG_FLOORS, RIG_HEADER, RIG_PRIORITY, rigCells, rigSummary, selectRigs, type RigFilter, type RigSort } from './rig-list.ts';
import { StatusDot } from './status-dot.tsx';
import { dateText } from '../../services/date-text.ts';
import { usePoll } from './use-poll.ts';
import { useTerminalRows, useTerminalWidth } from './use-width.ts';

export interface RigsWatchProps {
  /** Reads the whole rig list (filtering and order happen here). */
  load: () => Promise<RigView[]>;
  intervalMs: number;
  filter: RigFilter;
  sort: RigSort;
  colour: boolean;
  /** Clock for "last seen" (tests fix it). */
  now?: () => Date;
}

/** `rigd rigs --watch`: the rig table, refreshed every interval; `s` switches the order, `q` quits. */
export function RigsWatch({ load, intervalMs, filter, sort: initialSort, colour, now = () => new Date() }: RigsWatchProps) {
  const { exit } = useApp();
  const { isRawModeSupported } = useStdin();
  const [sort, setSort] = useState<RigSort>(initialSort);
  const polled = usePoll(load, intervalMs);
  const width = useTerminalWidth();
  const height = useTerminalRows();
  useInput(
    (input, key) => {
      if (input === 'q' || key.escape) exit();
      if (input === 's') setSort((s) => (s === 'id' ? 'last-seen' : 'id'));
    },
    { isActive: isRawModeSupported === true },
  );

  if (!polled.data) {
    return <Text>{polled.error ? `rigd: ${terminalText(polled.error.message)}` : 'loading rigs…'}</Text>;
  }
  const at = now();
  const selected = selectRigs(polled.data, filter, sort);
  // Only the rows the terminal can show (summary, header, footer and blank lines take 6): a frame
  // taller than the terminal makes Ink clear and redraw everything each time, for every rig, which
  // with 1,000 rigs cost a third of a CPU per open view.
  const room = height === undefined ? selected.length : Math.max(1, height - 7);
  const rigs = selected.length > room ? selected.slice(0, room) : selected;
  const hidden = selected.length - rigs.length;
  // The status column is drawn by StatusDot ("● online", 10 cells with its gap); the others are
  // aligned as text: long cells shortened, then the least important columns dropped, until the
  // table fits the terminal (ID and LAST SEEN always).
  const statusWidth = 7;
  const lines = fitAndAlign([RIG_HEADER.slice(1), ...rigs.map((r) => rigCells(r, at).slice(1))], RIG_PRIORITY.slice(1), width - (statusWidth + 3), RIG_FLOORS.slice(1));
  const filters = terminalText([filter.status && `status ${filter.status}`, filter.branch && `branch ${filter.branch}`].filter(Boolean).join(', '));
  return (
    <Box flexDirection="column">
      <Text bold={colour} wrap="truncate">
        {terminalText(rigSummary(polled.data.filter((r) => !filter.branch || r.branch === filter.branch)))}
      </Text>
      <Text> </Text>
      <Text bold={colour} wrap="truncate">
        {`  ${'STATUS'.padEnd(statusWidth)} ${lines[0]}`}
      </Text>
      {rigs.map((r, i) => (
        <Box key={r.id}>
          <StatusDot status={r.status} colour={colour} width={statusWidth} />
          <Text wrap="truncate"> {lines[i + 1]}</Text>
        </Box>
      ))}
      {hidden > 0 ? <Text dimColor={colour}>{`… ${hidden} more (a taller terminal shows more; rigd rigs lists them all)`}</Text> : null}
      {rigs.length === 0 ? <Text>{filters ? `no rig matches (${filters})` : 'no rig has reported yet'}</Text> : null}
      <Text> </Text>
      <Text dimColor={colour}>
        {`updated ${polled.at ? dateText(polled.at, 'clock') : ''} · every ${intervalMs / 1000} s · sorted by ${sort === 'id' ? 'id' : 'last seen'}${filters ? ` · ${filters}` : ''}${isRawModeSupported ? ' · s: sort · q: quit' : ''}`}
      </Text>
      {polled.error ? <Text color={colour ? 'red' : undefined}>{`rigd: refresh failed: ${terminalText(polled.error.message)}`}</Text> : null}
    </Box>
  );
}
