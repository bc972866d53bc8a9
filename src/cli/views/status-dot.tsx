import { Text } from 'ink';
import type { RigStatus } from '../../services/rigs/status.ts';

/** The rigs page's dot colours: green online, amber stale, grey offline. */
const COLOUR: Record<RigStatus, string> = { online: 'green', stale: 'yellow', offline: 'gray' };

/** "● online", the dot coloured unless colour is off (the word always says it). */
export function StatusDot({ status, colour, width }: { status: RigStatus; colour: boolean; width: number }) {
  return (
    <Text>
      <Text color={colour ? COLOUR[status] : undefined}>●</Text> {status.padEnd(width)}
    </Text>
  );
}
