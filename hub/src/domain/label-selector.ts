/**
 * Label selectors: matching (placement, filters) and parsing of the Kubernetes string syntax
 * used in `?labelSelector=` (`env=prod,tier!=db,region in (eu,us),!legacy,canary`).
 */
import { validateLabelSelector, validateLabels } from '@flotilla/api';
import type { FieldProblem, LabelSelector, LabelSelectorRequirement } from '@flotilla/api';
import { invalid } from '../errors.js';

export type Labels = Readonly<Record<string, string>>;

function matchesRequirement(labels: Labels, r: LabelSelectorRequirement): boolean {
  const has = Object.hasOwn(labels, r.key);
  const values = r.values ?? [];
  switch (r.operator) {
    case 'In':
      return has && values.includes(labels[r.key]!);
    case 'NotIn':
      return !has || !values.includes(labels[r.key]!);
    case 'Exists':
      return has;
    case 'DoesNotExist':
      return !has;
  }
}

/** True when `labels` satisfy every term of `selector`; the empty selector matches all. */
export function matchesSelector(labels: Labels, selector: LabelSelector): boolean {
  for (const [k, v] of Object.entries(selector.matchLabels ?? {})) {
    if (labels[k] !== v) return false;
  }
  return (selector.matchExpressions ?? []).every((r) => matchesRequirement(labels, r));
}

/**
 * Problems with a selector as Kubernetes validates one: keys are qualified names, values label
 * values, values present exactly for In/NotIn. Each problem names its field.
 */
export function selectorProblems(selector: LabelSelector, path: string): FieldProblem[] {
  return validateLabelSelector(selector, path).map(({ path: p, message }) => ({ path: p, message }));
}

/**
 * Problems with a label map as Kubernetes validates labels: keys are qualified names (an
 * optional DNS-subdomain prefix of at most 253 characters, a name of at most 63), values at most
 * 63 characters of `[A-Za-z0-9._-]`, starting and ending alphanumeric. A bad key is reported on
 * `path` with the key quoted in the message, a bad value on `path[key]`.
 */
export function labelProblems(labels: Labels, path: string): FieldProblem[] {
  return validateLabels(labels, path).map(({ path: p, message }) => ({ path: p, message }));
}

const SET_TERM = /^([^\s!=()]+)\s+(in|notin)\s+\(([^)]*)\)$/;
const EQ_TERM = /^([^\s!=()]+)\s*(==|=|!=)\s*([^\s!=(),]*)$/;
const EXISTS_TERM = /^(!?)([^\s!=(),]+)$/;

/** Splits on commas that are not inside parentheses. */
function splitTerms(s: string): string[] {
  const terms: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if (c === '(') depth++;
    else if (c === ')') depth--;
    else if (c === ',' && depth === 0) {
      terms.push(s.slice(start, i));
      start = i + 1;
    }
  }
  terms.push(s.slice(start));
  return terms.map((t) => t.trim()).filter((t) => t !== '');
}

function parseTerm(term: string): LabelSelectorRequirement | undefined {
  const set = SET_TERM.exec(term);
  if (set) {
    const values = set[3]!
      .split(',')
      .map((v) => v.trim())
      .filter((v) => v !== '');
    return { key: set[1]!, operator: set[2] === 'in' ? 'In' : 'NotIn', values };
  }
  const eq = EQ_TERM.exec(term);
  if (eq) return { key: eq[1]!, operator: eq[2] === '!=' ? 'NotIn' : 'In', values: [eq[3]!] };
  const ex = EXISTS_TERM.exec(term);
  if (ex) return { key: ex[2]!, operator: ex[1] === '!' ? 'DoesNotExist' : 'Exists' };
  return undefined;
}

/** Parses the string syntax; throws an Error naming the bad term. */
export function parseLabelSelector(s: string): LabelSelector {
  const matchExpressions = splitTerms(s).map((term) => {
    const r = parseTerm(term);
    if (!r) throw new Error(`cannot parse label selector term ${JSON.stringify(term)}`);
    return r;
  });
  return { matchExpressions };
}

/** Parses `?labelSelector=` (absent or blank: no selector); a syntax error is a 400 on that parameter. */
export function selectorParam(raw: string | undefined): LabelSelector | undefined {
  if (raw === undefined || raw.trim() === '') return undefined;
  try {
    return parseLabelSelector(raw);
  } catch (err) {
    throw invalid('invalid label selector', [{ path: 'labelSelector', message: (err as Error).message }]);
  }
}
