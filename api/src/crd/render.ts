/** Renders generated CRDs as the YAML files committed under deploy/crds/. */
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { stringify } from 'yaml';
import type { CustomResourceDefinition } from './generate.js';

/** deploy/crds of this checkout, found from this file (src/ and dist/ sit at the same depth). */
export const CRD_DIR = resolve(dirname(fileURLToPath(import.meta.url)), '../../../deploy/crds');

/**
 * The agent chart's copy (deploy/charts/flotilla-agent/files/crds): a chart cannot read files
 * outside its folder, so the generator writes the same files there too; templates/crds.yaml
 * renders them (test/integration/helm checks both copies stay equal to the generator's output).
 */
export const CHART_CRD_DIR = resolve(CRD_DIR, '../charts/flotilla-agent/files/crds');

const HEADER = '# Generated from api/src/kruise by `npm run gen:crds`. Do not edit by hand.\n';

/** deploy/crds/<file name> for a CRD, e.g. apps.kruise.io_clonesets.yaml (OpenKruise's names). */
export function crdFileName(crd: CustomResourceDefinition): string {
  return `${crd.spec.group}_${crd.spec.names.plural}.yaml`;
}

/** The file content for a CRD: a header comment and one YAML document. */
export function renderCrdYaml(crd: CustomResourceDefinition): string {
  // lineWidth 0: never fold long descriptions, so diffs stay line-per-field.
  return HEADER + stringify(crd, { lineWidth: 0, indentSeq: true, aliasDuplicateObjects: false });
}
