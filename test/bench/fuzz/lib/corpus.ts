/**
 * Valid Kruise objects to start from: the api package's test corpus (`testdata/valid`). Specs
 * that pass validation reach the code behind the validator (revisions, overrides, rendering,
 * the outbox), which random specs almost never do.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { parse } from 'yaml';

export type CorpusKind = 'CloneSet' | 'SidecarSet' | 'ImagePullJob';

export interface CorpusObject {
  kind: CorpusKind;
  file: string;
  spec: Record<string, unknown>;
  metadata: { labels?: Record<string, string>; annotations?: Record<string, string> };
}

const dir = path.join(path.dirname(fileURLToPath(import.meta.url)), '../../../../api/src/kruise/testdata/valid');
const KINDS: readonly string[] = ['CloneSet', 'SidecarSet', 'ImagePullJob'];

function load(): CorpusObject[] {
  return readdirSync(dir)
    .sort()
    .map((file) => ({ file, doc: parse(readFileSync(path.join(dir, file), 'utf8')) as Record<string, unknown> }))
    .filter(({ doc }) => KINDS.includes(doc['kind'] as string))
    .map(({ file, doc }) => {
      const meta = (doc['metadata'] ?? {}) as Record<string, unknown>;
      return {
        kind: doc['kind'] as CorpusKind,
        file,
        spec: doc['spec'] as Record<string, unknown>,
        metadata: {
          ...(meta['labels'] ? { labels: meta['labels'] as Record<string, string> } : {}),
          ...(meta['annotations'] ? { annotations: meta['annotations'] as Record<string, string> } : {}),
        },
      };
    });
}

export const CORPUS: readonly CorpusObject[] = load();

/** One corpus object (a copy: callers may change it). */
export const corpusObject: fc.Arbitrary<CorpusObject> = fc.constantFrom(...CORPUS).map((o) => structuredClone(o));

/** One corpus object of the given kind. */
export function corpusOf(kind: CorpusKind): fc.Arbitrary<CorpusObject> {
  return fc.constantFrom(...CORPUS.filter((o) => o.kind === kind)).map((o) => structuredClone(o));
}
