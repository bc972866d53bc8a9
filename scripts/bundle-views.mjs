#!/usr/bin/env node
// Runs after tsc (npm run build): replaces dist/cli/views/launch.js, the entry of the live terminal
// views, with one ES module holding those views, Ink and React. Node otherwise loads Ink's ~500
// modules one by one, half a second before the first frame on a gateway CPU; bundled, under 0.1 s.
import { build } from 'esbuild';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

await build({
  entryPoints: [path.join(root, 'src/cli/views/launch.tsx')],
  outfile: path.join(root, 'dist/cli/views/launch.js'),
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  jsx: 'automatic',
  sourcemap: true,
  logLevel: 'warning',
  // React's production build: what an operator runs.
  define: { 'process.env.NODE_ENV': '"production"' },
  // CommonJS dependencies (React) call require() for Node's own modules.
  banner: { js: "import { createRequire as __rigdRequire } from 'node:module'; const require = __rigdRequire(import.meta.url);" },
  plugins: [
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
