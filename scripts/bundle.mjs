#!/usr/bin/env node
// Runs after tsc (npm run build) and replaces two compiled modules with bundles, for CLI start-up:
// Node loads a package's files one by one, and on a gateway CPU that is most of a command's time.
// - dist/cli/views/launch.js: the live terminal views with Ink and React (~500 modules, half a
//   second, down to under 0.1 s).
// - dist/config/load.js: the config loader with joi (~50 modules), read by every command.
// src/errors.ts stays a shared module (its classes are checked with instanceof elsewhere).
import { build } from 'esbuild';
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
