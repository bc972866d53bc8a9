import { usersAndSessions } from './20261122-0001-users-and-sessions.ts';
import { rigs } from './20261122-0002-rigs.ts';
import { jobs } from './20261122-0003-jobs.ts';
import { uploads } from './20261122-0004-uploads.ts';
import { captures } from './20261122-0005-captures.ts';
import { rigReportsByVersion } from './20261123-0001-rig-reports-by-version.ts';
import { captureStateInJobs } from './20261123-0002-capture-state-in-jobs.ts';
import { loginAttempts } from './20261124-0101-login-attempts.ts';
import { secrets } from './20261124-0102-secrets.ts';
import { nodes } from './20261124-0103-nodes.ts';
import { rigIdentity } from './20261126-0261-01-rig-identity.ts';
import { jobGroups } from './20261126-0261-02-job-groups.ts';
import { auditLog } from './20261126-0262-01-audit-log.ts';
import { nodeRunId } from './20261126-0272-21-node-run-id.ts';
import { incidents } from './20261126-0310-01-incidents.ts';
import { emailKeysNfc } from './20261127-0401-01-email-keys-nfc.ts';
import { auditClientKind } from './20261127-0411-01-audit-client-kind.ts';
import type { Migration } from './types.ts';

/**
 * Every migration, oldest first. An explicit list (no directory scan) so the built program
 * finds them wherever it is installed. Append new ones; never edit one that has shipped.
 */
export const migrations: Migration[] = [usersAndSessions, rigs, jobs, uploads, captures, rigReportsByVersion, captureStateInJobs, loginAttempts, secrets, nodes, rigIdentity, jobGroups, auditLog, nodeRunId, incidents, emailKeysNfc, auditClientKind];
