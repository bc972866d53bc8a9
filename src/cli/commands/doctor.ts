import type { Command } from 'commander';
import { DomainError } from '../../errors.ts';
import type { GlobalOptions } from '../context.ts';
import { printJson } from '../context.ts';
import { printLines } from '../terminal-text.ts';

/** Any failed check: exit 1 (the lines above already said what and how to fix). */
class DoctorFailed extends DomainError {
  constructor(count: number) {
    super('unprocessable', 'doctor_failed', `${count} check${count === 1 ? '' : 's'} failed`);
  }
}

/** `rigd doctor [--json]`: one line per check (ok / warn / fail with the fix); exit 1 on any fail. */
export async function doctorCommand(opts: { json?: boolean }, cmd: Command): Promise<void> {
  const { runDoctor } = await import('../../services/doctor/doctor.ts');
  const report = await runDoctor({ file: cmd.optsWithGlobals<GlobalOptions>().config });
  if (opts.json) printJson(report);
  else {
    const width = Math.max(...report.checks.map((c) => c.check.length));
    for (const c of report.checks) {
      printLines(`${c.status.padEnd(4)}  ${c.check.padEnd(width)}  ${c.message}`, ...(c.fix ? [`${' '.repeat(width + 8)}fix: ${c.fix}`] : []));
    }
  }
  const failed = report.checks.filter((c) => c.status === 'fail').length;
  if (failed > 0) throw new DoctorFailed(failed);
}
