// Test-only preload: `NODE_OPTIONS=--require <this file>` with RIGD_TEST_SIGNAL_LISTENER_FILE=FILE in
// the environment of a rigd command that a test means to interrupt. Each time the program adds a
// listener for SIGINT or SIGTERM it appends "SIGNAL\n" to FILE, so that the test sends the signal
// once the program handles it instead of after a guessed delay. It observes only: the listener is
// added as the program asked. Never part of the program (test/ is not shipped).
'use strict';

const { appendFileSync } = require('node:fs');

const file = process.env.RIGD_TEST_SIGNAL_LISTENER_FILE;
if (file) {
  for (const name of ['on', 'addListener', 'once', 'prependListener', 'prependOnceListener']) {
    const original = process[name];
    process[name] = function (event, ...rest) {
      const result = original.call(this, event, ...rest);
      if (event === 'SIGINT' || event === 'SIGTERM') appendFileSync(file, `${event}\n`);
      return result;
    };
  }
}
