/**
 * Sequelize prints a console.warn of its own when the ROLLBACK after a failed BEGIN (SQLITE_BUSY:
 * another process held the write lock too long) fails too; the error itself still reaches the
 * command, which reports it in one line. That warning alone is dropped; every other one is kept.
 */
const ROLLBACK_NOISE = /^(Rolling back|Committing) transaction \S+ failed with error .* We are killing its connection as it is now in an undetermined state\.$/s;

export function dropSequelizeRollbackWarnings(): void {
  const warn = console.warn.bind(console);
  console.warn = (...args: unknown[]) => {
    if (args.length === 1 && typeof args[0] === 'string' && ROLLBACK_NOISE.test(args[0])) return;
    warn(...args);
  };
}
