/**
 * CLI: writes the generated CRDs to deploy/crds/ and into the agent chart (run as
 * `npm run gen:crds` from the repo root). An optional argument names another output directory
 * (and then only that one is written).
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { generateAllCrds } from './generate.js';
import { CHART_CRD_DIR, CRD_DIR, crdFileName, renderCrdYaml } from './render.js';

async function main(outDir: string): Promise<void> {
  await mkdir(outDir, { recursive: true });
  for (const crd of generateAllCrds()) {
    const file = join(outDir, crdFileName(crd));
    await writeFile(file, renderCrdYaml(crd));
    console.log(`wrote ${file}`);
  }
}

for (const dir of process.argv[2] ? [process.argv[2]] : [CRD_DIR, CHART_CRD_DIR]) await main(dir);
