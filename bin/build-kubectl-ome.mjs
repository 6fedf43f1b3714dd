// Bundles cli/main.ts into one ESM file for bin/kubectl-ome, written atomically so that
// plugins started at the same time never run a half-written bundle.
// Usage: node bin/build-kubectl-ome.mjs <outfile>
import { rename, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const outfile = process.argv[2];
if (!outfile) {
  console.error('usage: build-kubectl-ome.mjs OUTFILE');
  process.exit(1);
}
const temporary = `${outfile}.${process.pid}.tmp`;
try {
  await build({
    entryPoints: [join(root, 'cli', 'main.ts')],
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    outfile: temporary,
    logLevel: 'error',
    // The cached bundle reads the version and commit from the tree it was built from.
    define: { __OME_SOURCE_ROOT__: JSON.stringify(root) },
    // ESM bundles need a require() for the node built-ins that CommonJS dependencies load.
    banner: {
      js: "import { createRequire as __omeCreateRequire } from 'node:module'; const require = __omeCreateRequire(import.meta.url);",
    },
  });
  await rename(temporary, outfile);
} catch (error) {
  await rm(temporary, { force: true });
  console.error(`kubectl-ome: bundling failed: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
}
