// Test-only preload: `NODE_OPTIONS=--require <this file>` in the environment of a `rigd serve` that a
// test means to kill mid-import (see captureChildStopOptions in capture-child-stop.ts). Never part of
// the program (test/ is not shipped), and inert in every process but the capture child
// (dist/ingest/capture-child.js, forked by rigd with rigd's environment).
//
// In the capture child it watches what the child sends rigd, and the child stops itself (SIGSTOP)
// right after handing over its first rows: on SQLite the 'copied' of the first chunk copied into
// the store's open transaction, on PostgreSQL the first 'batch' written to the spool. rigd gets that
// message and records the rows as the job's progress; the child goes no further, so the import
// cannot commit. No timing is involved: the test waits for that progress and for the stopped child.
// With RIGD_TEST_CHILD_STOP_AT_STEP=STEP in its environment the child stops instead right after
// telling its parent it enters STEP (e.g. quick_check), so a test can act on it at that point
// however late the parent reads the message.
'use strict';

const path = require('node:path');

if (path.basename(process.argv[1] ?? '').startsWith('capture-child.') && typeof process.send === 'function') {
  const send = process.send;
  let stopped = false;
  const atStep = process.env.RIGD_TEST_CHILD_STOP_AT_STEP;
  process.send = function (message, ...rest) {
    const here = atStep
      ? message && message.type === 'step' && message.step === atStep
      : message && (message.type === 'copied' || message.type === 'batch') && message.rows > 0;
    if (stopped || !here) return send.call(this, message, ...rest);
    stopped = true;
    // send(message[, handle[, options]][, callback]): the same call, with a callback of ours.
    const done = rest.find((a) => typeof a === 'function');
    const args = rest.filter((a) => typeof a !== 'function');
    while (args.length < 2) args.push(undefined);
    // Once the message is on the channel (rigd will read it), not before.
    return send.call(this, message, ...args, (err) => {
      process.kill(process.pid, 'SIGSTOP');
      done?.(err);
    });
  };
}
