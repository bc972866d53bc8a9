import { UsageError } from '../fail.ts';

/** A rig id argument: an empty one (`rigd rigs show "$RIG"` with RIG unset) is a usage error (exit 2). */
export function rigIdArgument(text: string): string {
  if (text.trim() === '') throw new UsageError('rig id is empty: give a rig id as rigd rigs lists it');
  return text;
}
