// The spool file an import's batches travel through: unnamed from the start, read back into one
// reused buffer, lengths checked against what the child wrote and what a batch can take.
import { fstatSync, readdirSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import test from 'tape';
import { BatchSpool } from '../../src/ingest/batch-spool.ts';
import { tmpDir } from '../helpers/tmp.ts';

// A temporary directory of this file's own (os.tmpdir() follows TMPDIR): the imports of other
// processes on this machine make and remove rigd-import- directories in the shared one.
process.env.TMPDIR = tmpDir('rigd-spool-');

test('the spool has no name on disk and reads back what was written at offset 0', async (t) => {
  const spool = BatchSpool.open();
  try {
    t.equal(fstatSync(spool.fd).nlink, 0, 'the file is unlinked');
    t.deepEqual(readdirSync(tmpdir()), [], `no directory left behind in ${tmpdir()}`);
    t.equal(fstatSync(spool.fd).mode & 0o777, 0o600, 'mode 0600');
    writeSync(spool.fd, Buffer.from('hello world'), 0, 11, 0);
    const a = await spool.read(11, 100);
    t.equal(a.toString(), 'hello world', 'first batch');
    writeSync(spool.fd, Buffer.from('bye'), 0, 3, 0);
    const b = await spool.read(3, 100);
    t.equal(b.toString(), 'bye', 'second batch, shorter');
    t.equal(b.buffer, a.buffer, 'read into the same buffer');
    await spool.read(20, 100).then(
      () => t.fail('read past what was written'),
      (err: Error) => t.match(err.message, /announced a batch of 20 bytes, wrote 11/, 'a batch longer than written is refused'),
    );
    await spool.read(101, 100).then(
      () => t.fail('read over the limit'),
      (err: Error) => t.match(err.message, /at most 100/, 'a batch over the limit is refused before reading'),
    );
  } finally {
    await spool.close();
  }
  await spool.read(1, 100).then(
    () => t.fail('read after close'),
    (err: Error) => t.match(err.message, /closed/, 'closed'),
  );
  t.end();
});

test('closing waits for the read in progress before the descriptor goes', async (t) => {
  const spool = BatchSpool.open();
  writeSync(spool.fd, Buffer.alloc(4 << 20, 5), 0, 4 << 20, 0);
  const reading = spool.read(4 << 20, 8 << 20);
  const closing = spool.close();
  const got = await reading;
  t.equal(got.length, 4 << 20, 'the read in progress completes');
  t.equal(got[got.length - 1], 5, 'with the bytes written');
  await closing;
  t.throws(() => fstatSync(spool.fd), /EBADF/, 'then the descriptor is closed');
  t.end();
});
