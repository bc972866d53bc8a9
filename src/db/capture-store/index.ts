/** The capture store: its layout, the writer the import uses, and the read-only opener for export and query. */
export * from './layout.ts';
export type { CaptureStoreWriter, EngineCopyTarget, ReplaceProgress, ReplaceResult, RowBatch, StoreTable } from './writer.ts';
export { openCaptureStore, SqliteCaptureStore } from './sqlite-writer.ts';
export { openCaptureStoreReadOnly } from './sqlite-file.ts';
export { openPgCaptureStore, PgCaptureStore } from './postgres-writer.ts';
export { CAPTURE_STORE_SCHEMA } from './postgres-schema.ts';
export { openStoreReader, type StoreReader } from './store-reader.ts';
export { openStoreWriter } from './open-writer.ts';
export { DEFAULT_BOUNDS, type StoreBounds } from './placement.ts';
