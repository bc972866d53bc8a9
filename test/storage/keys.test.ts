// validateKey: MinIO's key rules, each refusal saying which rule.
import test from 'tape';
import { InvalidInput } from '../../src/errors.ts';
import { keyProblem, validateKey } from '../../src/storage/contract.ts';

test('valid keys pass', (t) => {
  for (const key of ['a', 'a/b', 'rig-7/2024-01-01/capture.sqlite', 'a b/c (1).db', '...', '.hidden/..x/x..', 'ü/日本/😀', "!'()*~+=&?#%", 'x'.repeat(1024), 'é'.repeat(512), 'a\\b']) {
    t.doesNotThrow(() => validateKey(key), JSON.stringify(key.length > 30 ? `${key.slice(0, 20)}... (${key.length})` : key));
  }
  t.end();
});

test('invalid keys are refused with InvalidInput naming the rule', (t) => {
  const cases: Array<[string, RegExp]> = [
    ['', /empty/],
    ['a\0b', /NUL/],
    ['\0', /NUL/],
    ['/a', /start with "\/"/],
    ['a/', /end with "\/"/],
    ['/', /start with "\/"/],
    ['a//b', /"\/\/"/],
    ['.', /"\." or "\.\." segments/],
    ['..', /"\." or "\.\." segments/],
    ['a/./b', /"\." or "\.\." segments/],
    ['a/../b', /"\." or "\.\." segments/],
    ['../a', /"\." or "\.\." segments/],
    ['a/..', /"\." or "\.\." segments/],
    ['x'.repeat(1025), /at most 1024 bytes/],
    ['é'.repeat(513), /at most 1024 bytes/], // 513 characters, 1026 bytes
    ['a\ud800b', /valid Unicode/],
  ];
  for (const [key, rule] of cases) {
    let err: unknown;
    try {
      validateKey(key);
    } catch (e) {
      err = e;
    }
    const label = JSON.stringify(key.length > 20 ? `${key.slice(0, 10)}... (${key.length})` : key);
    t.ok(err instanceof InvalidInput, `${label} refused with InvalidInput`);
    t.match((err as Error)?.message ?? '', rule, `${label}: ${(err as Error)?.message}`);
    t.equal((err as InvalidInput)?.details?.[0]?.field, 'key', `${label}: detail names the key field`);
  }
  t.equal(keyProblem(42), 'key must be a string', 'a non-string is not a key');
  t.end();
});
