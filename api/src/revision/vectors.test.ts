import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { cloneSetRevision, cloneSetRevisionData } from './cloneSetRevision.js';
import { fnv1Hash32 } from './fnv1.js';
import { goJsonMarshal } from './goJson.js';
import { normalizePodTemplateForRevision } from './podTemplate.js';
import { canonicalQuantity } from './quantity.js';
import { safeEncodeString } from './safeEncode.js';
import { sidecarSetHash, sidecarSetHashDocument, sidecarSetHashWithoutImage } from './sidecarSetHash.js';
import { encodeGoTyped } from './typedJson.js';
import { utf8Bytes } from './utf8.js';

// Expected outputs computed by Go (test/vectors, `npm run gen:vectors`) with the libraries
// OpenKruise v1.8 builds with. Inputs are JSON texts so both sides start from the same bytes.
interface Vectors {
  goJson: { name: string; input: string; output: string }[];
  quantities: { input: string; output?: string; error?: boolean }[];
  fnv1: { input: string; sum32: number }[];
  safeEncode: { input: string; output: string }[];
  cloneSets: {
    name: string;
    cloneSet: string;
    collisionCount: number | null;
    error?: boolean;
    typedTemplate?: string;
    data?: string;
    hash?: string;
    revisionName?: string;
  }[];
  sidecarSets: {
    name: string;
    sidecarSet: string;
    error?: boolean;
    encoded?: string;
    hash?: string;
    hashWithoutImage?: string;
  }[];
}

const vectors = JSON.parse(readFileSync(new URL('./testdata/vectors.json', import.meta.url), 'utf8')) as Vectors;

// JSON.parse has already rounded integers above 2^53 that Go prints exactly in its typed text;
// the revision data is unaffected because Go re-reads that text as float64 as well.
const TYPED_TEXT_LOSES_INT64_PRECISION = new Set(['large and negative integers']);

// A pointer to the zero time encodes as null, which decodes as no pointer: Go's round trip is
// not idempotent there either. Every other template must come back unchanged.
const NOT_IDEMPOTENT = new Set(['fractional and zero time']);

interface ParsedCloneSet {
  metadata?: { name?: string };
  spec?: { template?: unknown };
}

interface ParsedSidecarSet {
  spec?: { containers?: unknown[] | null; initContainers?: unknown[] | null };
}

describe('Go vectors: goJsonMarshal', () => {
  it.each(vectors.goJson)('$name', ({ input, output }) => {
    expect(goJsonMarshal(JSON.parse(input))).toBe(output);
  });
});

describe('Go vectors: quantities', () => {
  it.each(vectors.quantities)('$input', ({ input, output, error }) => {
    if (error) expect(() => canonicalQuantity(input)).toThrow(/invalid quantity/);
    else expect(canonicalQuantity(input)).toBe(output);
  });
});

describe('Go vectors: FNV-1 32 and SafeEncodeString', () => {
  it.each(vectors.fnv1)('fnv1 of $input', ({ input, sum32 }) => {
    expect(fnv1Hash32(utf8Bytes(input))).toBe(sum32);
  });
  it.each(vectors.safeEncode)('safeEncodeString($input)', ({ input, output }) => {
    expect(safeEncodeString(input)).toBe(output);
  });
});

describe('Go vectors: CloneSet revisions', () => {
  it.each(vectors.cloneSets)('$name (collisionCount $collisionCount)', (v) => {
    const cloneSet = JSON.parse(v.cloneSet) as ParsedCloneSet;
    if (v.error) {
      expect(() => cloneSetRevisionData(cloneSet)).toThrow();
      return;
    }
    const typed = encodeGoTyped('core.PodTemplateSpec', cloneSet.spec?.template);
    if (TYPED_TEXT_LOSES_INT64_PRECISION.has(v.name)) expect(JSON.parse(typed)).toEqual(JSON.parse(v.typedTemplate!));
    else expect(typed).toBe(v.typedTemplate);
    const normalized = normalizePodTemplateForRevision(cloneSet.spec?.template);
    expect(normalized).toEqual(JSON.parse(v.typedTemplate!));
    if (!NOT_IDEMPOTENT.has(v.name)) expect(normalizePodTemplateForRevision(normalized)).toEqual(normalized);
    expect(cloneSetRevision(cloneSet, v.collisionCount)).toEqual({ data: v.data, hash: v.hash, name: v.revisionName });
  });
});

describe('Go vectors: SidecarSet hashes', () => {
  it.each(vectors.sidecarSets)('$name', (v) => {
    const sidecarSet = JSON.parse(v.sidecarSet) as ParsedSidecarSet;
    if (v.error) {
      expect(() => sidecarSetHash(sidecarSet)).toThrow();
      return;
    }
    expect(sidecarSetHashDocument(sidecarSet.spec?.containers, sidecarSet.spec?.initContainers)).toBe(v.encoded);
    expect(sidecarSetHash(sidecarSet)).toBe(v.hash);
    expect(sidecarSetHashWithoutImage(sidecarSet)).toBe(v.hashWithoutImage);
  });
});
