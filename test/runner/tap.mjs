// Counts one test file's TAP output: assertions passed, failed (with their lines) and skipped, and
// its plan. A skipped assertion ("ok N reason # SKIP") is in the plan; a skipped test ("# SKIP name
// reason", a comment) is not. Both count as skipped, never as passed.
export function countTap(text) {
  const c = { passed: 0, failed: 0, skipped: 0, assertionsSkipped: 0, planned: null, failures: [] };
  for (const line of text.split('\n')) {
    if (/^ok \d+.*# skip\b/i.test(line)) {
      c.assertionsSkipped++;
      c.skipped++;
    } else if (/^# skip\b/i.test(line)) c.skipped++;
    else if (/^ok \d+/.test(line)) c.passed++;
    else if (/^not ok \d+/.test(line)) {
      c.failed++;
      c.failures.push(line);
    } else if (/^1\.\.(\d+)$/.test(line)) c.planned = Number(line.slice(3));
  }
  return c;
}
