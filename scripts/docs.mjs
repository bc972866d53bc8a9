#!/usr/bin/env node
// Build step (after tsc and bundle.mjs): the reference pages generated from the code, so they
// cannot drift from it.
// - docs/configuration.md: every config key from the schema (checked by test/docs/configuration.test.ts)
// - dist/man/rigd.1: every command and option of the commander program
// - dist/man/rigd.yaml.5: every config key
// --print-config writes the configuration reference to stdout instead of any file.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { configKeys, configMarkdown } from './docs/config-reference.mjs';
import { configManPage, rigdManPage } from './docs/man.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const load = (rel) => import(pathToFileURL(path.join(root, rel)).href);

const { configSchema } = await load('dist/config/schema.js');
const { envName } = await load('dist/config/load.js');
const { buildProgram } = await load('dist/cli/main.js');
const pkg = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8'));

const keys = configKeys(configSchema, readFileSync(path.join(root, 'config.example.yaml'), 'utf8'), envName);
const markdown = `${configMarkdown(keys).trimEnd()}\n`;
if (process.argv.includes('--print-config')) {
  process.stdout.write(markdown);
} else {
  // SOURCE_DATE_EPOCH (reproducible builds, as dpkg sets it) dates the man pages, else today.
  const epoch = Number(process.env.SOURCE_DATE_EPOCH);
  const meta = { version: pkg.version, date: new Date(Number.isFinite(epoch) && epoch > 0 ? epoch * 1000 : Date.now()).toISOString().slice(0, 10) };
  writeFileSync(path.join(root, 'docs/configuration.md'), markdown);
  mkdirSync(path.join(root, 'dist/man'), { recursive: true });
  writeFileSync(path.join(root, 'dist/man/rigd.1'), rigdManPage(buildProgram(), meta));
  writeFileSync(path.join(root, 'dist/man/rigd.yaml.5'), configManPage(keys, meta));
}
