// Every ELF file of the staged package (the runtime, each .node addon) must be built for the
// package's architecture, as `file` says: a binary for another one fails the build.
import { spawnSync } from 'node:child_process';
import { closeSync, openSync, readdirSync, readSync } from 'node:fs';
import path from 'node:path';
import { fail } from './fail.mjs';

function isElf(file) {
  const fd = openSync(file, 'r');
  try {
    const head = Buffer.alloc(4);
    return readSync(fd, head, 0, 4, 0) === 4 && head.equals(Buffer.from([0x7f, 0x45, 0x4c, 0x46]));
  } finally {
    closeSync(fd);
  }
}

function elfFiles(dir, out = []) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    if (entry.isDirectory()) elfFiles(p, out);
    else if (entry.isFile() && (entry.name.endsWith('.node') || isElf(p))) out.push(p);
  }
  return out;
}

/** Checks the stage; returns the ELF files as `file` describes them (relative path: description). */
export function checkArch(stage, target, mustHave) {
  const files = elfFiles(stage);
  for (const need of mustHave) if (!files.includes(path.join(stage, need))) fail(`${need} is missing from the package`);
  const res = spawnSync('file', ['-b', ...files], { encoding: 'utf8' });
  if (res.status !== 0) fail(`file(1) failed (apt-get install file): ${(res.stderr || res.error?.message || '').trim()}`);
  const kinds = res.stdout.trim().split('\n');
  const wrong = files.filter((_, i) => !target.file.test(kinds[i] ?? ''));
  if (wrong.length) {
    fail(`not built for ${target.arch}:\n${wrong.map((f) => `  /${path.relative(stage, f)}: ${kinds[files.indexOf(f)]}`).join('\n')}`);
  }
  return files.map((f, i) => `/${path.relative(stage, f)}: ${kinds[i]}`);
}
