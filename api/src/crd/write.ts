/**
 * CLI: writes the generated CRDs to deploy/crds/ (run as `npm run gen:crds` from the repo root).
 * An optional argument names another output directory.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { generateAllCrds } from './generate.js';
import { CRD_DIR, crdFileName, renderCrdYaml } from './render.js';

async function main(outDir: string): Promise<void> {
  await mkdir(outDir, { recursive: true });
  for (const crd of generateAllCrds()) {
    const file = join(outDir, crdFileName(crd));
    await writeFile(file, renderCrdYaml(crd));
    console.log(`wrote ${file}`);
  }
}

await main(process.argv[2] ?? CRD_DIR);
