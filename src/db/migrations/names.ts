/**
 * The names of every migration, oldest first, with nothing else loaded: a command that only reads
 * checks the database is current against this list without loading Sequelize or umzug.
 * test/db/reader.test.ts keeps it equal to the names in index.ts.
 */
export const MIGRATION_NAMES = [
  '20261122-0001-users-and-sessions',
  '20261122-0002-rigs',
  '20261122-0003-jobs',
  '20261122-0004-uploads',
  '20261122-0005-captures',
  '20261123-0001-rig-reports-by-version',
  '20261123-0002-capture-state-in-jobs',
  '20261124-0101-login-attempts',
  '20261124-0102-secrets',
  '20261124-0103-nodes',
  '20261126-0261-01-rig-identity',
  '20261126-0261-02-job-groups',
  '20261126-0262-01-audit-log',
  '20261126-0272-21-node-run-id',
  '20261126-0310-01-incidents',
  '20261127-0401-01-email-keys-nfc',
  '20261127-0411-01-audit-client-kind',
] as const;
