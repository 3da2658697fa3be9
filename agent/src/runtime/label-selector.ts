import { AgentError } from '../errors.js';

/** metav1.LabelSelectorRequirement. */
export interface LabelSelectorRequirement {
  key: string;
  operator: string;
  values?: string[];
}

/** metav1.LabelSelector, as in a CloneSet's `spec.selector`. */
export interface LabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: LabelSelectorRequirement[];
}

export type Labels = Readonly<Record<string, string>> | undefined;

/** A compiled selector. */
export type LabelMatcher = (labels: Labels) => boolean;

/** Anything list() accepts as a selector: the string syntax, a LabelSelector, or a matcher. */
export type SelectorInput = string | LabelSelector | LabelMatcher;

type Requirement = (labels: Readonly<Record<string, string>>) => boolean;

const everything: LabelMatcher = () => true;

/** Compiles a selector; undefined selects everything. */
export function toMatcher(input: SelectorInput | undefined): LabelMatcher {
  if (input === undefined) return everything;
  if (typeof input === 'function') return input;
  return typeof input === 'string' ? parseLabelSelector(input) : labelSelectorMatcher(input);
}

/**
 * Compiles a metav1.LabelSelector. An empty selector selects everything; callers that hold a
 * possibly-null selector (where null means nothing, as in the API) decide that before calling.
 */
export function labelSelectorMatcher(selector: LabelSelector): LabelMatcher {
  const reqs: Requirement[] = Object.entries(selector.matchLabels ?? {}).map(([k, v]) => equals(k, v));
  for (const expr of selector.matchExpressions ?? []) reqs.push(expression(expr));
  return (labels) => reqs.every((req) => req(labels ?? {}));
}

/**
 * Parses the string syntax of `kubectl -l` and `?labelSelector=`: `a=b`, `a==b`, `a!=b`,
 * `a in (x,y)`, `a notin (x)`, `a`, `!a`, comma-separated. Throws AGENT_ERR_SELECTOR otherwise.
 */
export function parseLabelSelector(text: string): LabelMatcher {
  const reqs = splitRequirements(text).map(parseRequirement);
  return (labels) => reqs.every((req) => req(labels ?? {}));
}

/** The string syntax of a LabelSelector, for server-side filtering of list and watch. */
export function formatLabelSelector(selector: LabelSelector): string {
  const parts = Object.entries(selector.matchLabels ?? {}).map(([k, v]) => `${k}=${v}`);
  for (const { key, operator, values = [] } of selector.matchExpressions ?? []) {
    if (operator === 'In') parts.push(`${key} in (${values.join(',')})`);
    else if (operator === 'NotIn') parts.push(`${key} notin (${values.join(',')})`);
    else if (operator === 'Exists') parts.push(key);
    else if (operator === 'DoesNotExist') parts.push(`!${key}`);
    else throw selectorError(`unknown operator ${operator} for key ${key}`);
  }
  return parts.join(',');
}

function expression({ key, operator, values = [] }: LabelSelectorRequirement): Requirement {
  switch (operator) {
    case 'In':
      return (l) => key in l && values.includes(l[key]!);
    case 'NotIn':
      return (l) => !(key in l) || !values.includes(l[key]!);
    case 'Exists':
      return (l) => key in l;
    case 'DoesNotExist':
      return (l) => !(key in l);
    default:
      throw selectorError(`unknown operator ${operator} for key ${key}`);
  }
}

function equals(key: string, value: string): Requirement {
  return (l) => l[key] === value;
}

function splitRequirements(text: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '(') depth++;
    else if (c === ')') depth--;
    else if (c === ',' && depth === 0) {
      parts.push(text.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(text.slice(start));
  const trimmed = parts.map((p) => p.trim());
  return trimmed.length === 1 && trimmed[0] === '' ? [] : trimmed;
}

const KEY = String.raw`[A-Za-z0-9][-A-Za-z0-9_./]*`;
const SET_RE = new RegExp(String.raw`^(${KEY})\s+(in|notin)\s*\(([^()]*)\)$`);
const CMP_RE = new RegExp(String.raw`^(${KEY})\s*(==|!=|=)\s*([-A-Za-z0-9_.]*)$`);
const EXISTS_RE = new RegExp(String.raw`^(!?)\s*(${KEY})$`);

function parseRequirement(text: string): Requirement {
  const set = SET_RE.exec(text);
  if (set) {
    const values = set[3]!.split(',').map((v) => v.trim());
    return expression({ key: set[1]!, operator: set[2] === 'in' ? 'In' : 'NotIn', values });
  }
  const cmp = CMP_RE.exec(text);
  if (cmp) {
    const [, key, op, value] = cmp as unknown as [string, string, string, string];
    return op === '!=' ? (l) => l[key] !== value : equals(key, value);
  }
  const exists = EXISTS_RE.exec(text);
  if (exists) return expression({ key: exists[2]!, operator: exists[1] ? 'DoesNotExist' : 'Exists' });
  throw selectorError(`cannot parse requirement "${text}"`);
}

function selectorError(message: string): AgentError {
  return new AgentError('AGENT_ERR_SELECTOR', `label selector: ${message}`);
}
