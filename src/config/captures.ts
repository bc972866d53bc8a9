/** The captures section: the capture store's per-capture bounds and its exports (src/db/capture-store, src/services/captures). */
import Joi from 'joi';

const positiveInt = Joi.number().integer().min(1);

export interface CapturesConfig {
  /** Most plain tables in one capture (more: the capture fails with too_many_tables). */
  max_tables: number;
  /** Most columns in one capture table (more: the capture fails with too_wide). */
  max_columns: number;
  /** Most new columns one capture table may add to the shared store table of its name (more: a table of its own shape). */
  max_new_shared_columns: number;
  /** Widest a shared store table may grow (wider: a table of its own shape). */
  max_shared_columns: number;
  /** Exports (CLI excluded: API only) running at once on this node; more get 429. */
  export_max_concurrent: number;
  /** Exports running at once for one user; more get 429. */
  export_max_per_user: number;
  /** Most bytes of values one export reads from the store per page. */
  export_page_bytes: number;
  /** Seconds /healthz reuses its count of ingested captures' rows in the store. */
  rows_check_s: number;
}

export const capturesSchema = Joi.object({
  max_tables: positiveInt.max(10_000).default(1000),
  // SQLite holds at most 2000 columns per table, PostgreSQL 1600 (capture_id is one of them).
  max_columns: positiveInt.max(1599).default(1000),
  max_new_shared_columns: Joi.number().integer().min(0).max(1599).default(32),
  max_shared_columns: positiveInt.max(1599).default(256),
  export_max_concurrent: positiveInt.max(10_000).default(16),
  export_max_per_user: positiveInt.max(10_000).default(4),
  export_page_bytes: Joi.number().integer().min(65_536).max(256 * 1024 ** 2).default(1024 ** 2),
  rows_check_s: positiveInt.max(86_400).default(300),
}).default();
