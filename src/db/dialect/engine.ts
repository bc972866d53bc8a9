/**
 * The engines by name, and the one way the rest of src/db writes an engine difference: a value per
 * engine (forEngine), never a comparison with an engine's name. A leaf: it imports nothing, so any
 * module of src/db (migrations included) may use it without joining an import circle.
 */

/** The engines rigd runs on. */
export type DialectName = 'sqlite' | 'postgres';

/** The engine a Sequelize instance runs on. */
export function engineOf(sequelize: { getDialect(): string }): DialectName {
  return sequelize.getDialect() === 'postgres' ? 'postgres' : 'sqlite';
}

/**
 * The value for `engine` out of one per engine: every engine named, none compared, none forgotten
 * (the type asks for both).
 */
export function forEngine<T>(engine: DialectName, values: Record<DialectName, T>): T {
  return values[engine];
}
