// Bundles the compiled agent (agent/dist, from `tsc -b agent`) into agent/dist/bundle: main.js
// (`agent manager`, `agent daemon`) and worker.js (the admission thread) with the modules they
// share split into chunks, so each of the two isolates loads only what it runs. One bundle instead
// of ~1,300 modules (typebox alone is 683 files) keeps about 20 MiB less resident per isolate
// (test/bench/kruise/README.md). The image runs agent/dist/bundle/main.js.
//
//   node agent/scripts/bundle.mjs
import { build } from 'esbuild';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

const agent = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const dist = path.join(agent, 'dist');

await build({
  entryPoints: { main: path.join(dist, 'main.js'), worker: path.join(dist, 'webhook/thread/worker.js') },
  outdir: path.join(dist, 'bundle'),
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  // Workspace packages resolve to their compiled dist (the default export condition).
  conditions: ['node', 'import', 'default'],
  // CommonJS dependencies call require(); in an ES module it has to be made.
  banner: {
    js: "import { createRequire as __flotillaRequire } from 'node:module'; const require = __flotillaRequire(import.meta.url);",
  },
  sourcemap: 'linked',
  legalComments: 'linked',
  logLevel: 'warning',
});
