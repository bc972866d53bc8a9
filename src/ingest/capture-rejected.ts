/** Why an untrusted capture file is refused; the inspector, the header check and the ingester share it. */
export type CaptureRejectReason =
  | 'not_sqlite' // not a SQLite database file (header, page size, format version)
  | 'truncated' // shorter than its header says, or not a whole number of pages
  | 'corrupt' // SQLite's quick_check or reading the file failed on damaged content
  | 'unsupported_schema' // triggers, views, virtual tables, functions or collations in the schema
  | 'too_many_tables' // more plain tables than captures.max_tables
  | 'too_wide' // a table with more columns than captures.max_columns
  | 'too_large' // larger than maxBytes
  | 'row_too_large' // a single value is larger than the inspector's length limit
  | 'resource_limit' // the inspector ran out of its memory budget
  | 'timeout' // the inspection did not finish within timeoutMs
  | 'inspector_crashed'; // the child process died without an answer (e.g. killed by a memory cap)

/** The capture file is refused. `reason` is stable snake_case; the message is one human sentence. */
export class CaptureRejected extends Error {
  override name = 'CaptureRejected';
  constructor(
    readonly reason: CaptureRejectReason,
    message: string,
  ) {
    super(message);
  }
}
