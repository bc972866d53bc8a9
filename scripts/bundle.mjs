#!/usr/bin/env node
// Runs after tsc (npm run build) and replaces three compiled modules with bundles, for CLI start-up:
// Node loads a package's files one by one, and on a gateway CPU that is most of a command's time.
// - dist/cli/views/launch.js: the live terminal views with Ink and React (~500 modules, half a
//   second, down to under 0.1 s).
// - dist/config/load.js: the config loader with joi (~50 modules), read by every command.
// - dist/cli/commands/ingest.js: `rigd ingest` (below).
// src/errors.ts stays a shared module (its classes are checked with instanceof elsewhere).
import { build } from 'esbuild';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

const common = {
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  sourcemap: true,
  allowOverwrite: true,
  logLevel: 'warning',
  // CommonJS dependencies (React, joi) call require() for Node's own modules.
  banner: { js: "import { createRequire as __rigdRequire } from 'node:module'; const require = __rigdRequire(import.meta.url);" },
};

/** Keeps src/errors.ts out of a bundle: the bundle imports the compiled dist/errors.js instead. */
const sharedErrors = (relative) => ({
  name: 'shared-errors',
  setup(b) {
    b.onResolve({ filter: /\/errors\.ts$/ }, () => ({ path: relative, external: true }));
  },
});

await build({
  ...common,
  entryPoints: [path.join(root, 'src/cli/views/launch.tsx')],
  outfile: path.join(root, 'dist/cli/views/launch.js'),
  jsx: 'automatic',
  // React's production build: what an operator runs.
  define: { 'process.env.NODE_ENV': '"production"' },
  plugins: [
    sharedErrors('../../errors.js'),
    {
      // Ink connects to React DevTools only when DEV=true; the package is not installed.
      name: 'no-devtools',
      setup(b) {
        b.onResolve({ filter: /^react-devtools-core$/ }, () => ({ path: 'react-devtools-core', namespace: 'stub' }));
        b.onLoad({ filter: /.*/, namespace: 'stub' }, () => ({ contents: 'export default { connectToDevTools() {} };', loader: 'js' }));
      },
    },
  ],
});

await build({
  ...common,
  entryPoints: [path.join(root, 'src/config/load.ts')],
  outfile: path.join(root, 'dist/config/load.js'),
  // yaml loads only when a config file is read.
  external: ['yaml'],
  plugins: [sharedErrors('../errors.js')],
});

// - dist/cli/commands/ingest.js: `rigd ingest` with the database layer, Sequelize and its
//   dependencies (~400 modules): its start comes before the job exists, so it is part of
//   `rigd ingest --wait`'s time (docs/perf/capture-import.md, "Then: the command's own time").
//   Modules other code of the process shares (errors, the CLI's context and failure output, the
//   live views) and modules that find files next to themselves (import.meta) stay modules of their
//   own; so do native and lazily used packages.
const ingestShared = ['src/errors.ts', 'src/cli/context.ts', 'src/cli/fail.ts', 'src/cli/views/launch.tsx'].map((f) => path.join(root, f));
const ingestOutDir = path.join(root, 'dist/cli/commands');
// sqlite3 is native; the others load lazily (an import() in the code) or not at all. pg is bundled:
// its import in the PostgreSQL dialect would otherwise load it on SQLite too.
const ingestExternalPackages = /^(sqlite3|minio|umzug|yaml|pino|pino-.+|nodemailer|undici|ink|react)(\/|$)/;
await build({
  ...common,
  entryPoints: [path.join(root, 'src/cli/commands/ingest.ts')],
  outfile: path.join(ingestOutDir, 'ingest.js'),
  // The config loader's bundle (shared through src/cli/context.ts) declares `require` too.
  banner: { js: "import { createRequire as __rigdIngestRequire } from 'node:module'; const require = __rigdIngestRequire(import.meta.url);" },
  plugins: [
    {
      name: 'ingest-shared',
      setup(b) {
        b.onResolve({ filter: /^\.\.?\// }, (args) => {
          if (args.importer.includes(`${path.sep}node_modules${path.sep}`)) return undefined;
          const target = path.resolve(args.resolveDir, args.path);
          const ownPlace = /\.tsx?$/.test(target) && existsSync(target) && readFileSync(target, 'utf8').includes('import.meta');
          if (!ingestShared.includes(target) && !ownPlace) return undefined;
          const built = path.join(root, 'dist', path.relative(path.join(root, 'src'), target)).replace(/\.tsx?$/, '.js');
          return { path: `./${path.relative(ingestOutDir, built)}`.replace(/^\.\/\.\.\//, '../'), external: true };
        });
        b.onResolve({ filter: /^[^./]/ }, (args) => (ingestExternalPackages.test(args.path) ? { path: args.path, external: true } : undefined));
      },
    },
  ],
});
