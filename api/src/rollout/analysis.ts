/**
 * Metric analysis of a wave (issue 26 item 2): PromQL query templates with placeholders, and
 * success / failure conditions of the form `result <op> <number>`. Parsing, rendering and
 * judging are pure and shared: the REST API validates with them offline (no Prometheus is asked
 * at the API) and the hub's analysis runner judges each measured value with them.
 */
import { childPath, forbidden, indexPath, invalid, required, type FieldError } from '../validation/index.js';

/** The names a query template may use as `{{name}}`. */
export const ANALYSIS_PLACEHOLDERS = ['cluster', 'namespace', 'workload'] as const;
export type AnalysisPlaceholder = (typeof ANALYSIS_PLACEHOLDERS)[number];

export type ConditionOperator = '<=' | '>=' | '==' | '!=' | '<' | '>';

export interface AnalysisCondition {
  op: ConditionOperator;
  value: number;
}

const CONDITION = /^\s*result\s*(<=|>=|==|!=|<|>)\s*(-?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?)\s*$/;
const PLACEHOLDER = /\{\{\s*([^}\s]*)\s*\}\}/g;

/** Parses `result < 0.05`; a string explaining what is wrong when it is not such a comparison. */
export function parseCondition(text: string): AnalysisCondition | string {
  const m = CONDITION.exec(text);
  if (!m) return 'must be a comparison like "result < 0.05" (operators <, <=, >, >=, ==, !=; a number)';
  return { op: m[1] as ConditionOperator, value: Number(m[2]) };
}

export function holds(c: AnalysisCondition, result: number): boolean {
  switch (c.op) {
    case '<':
      return result < c.value;
    case '<=':
      return result <= c.value;
    case '>':
      return result > c.value;
    case '>=':
      return result >= c.value;
    case '==':
      return result === c.value;
    case '!=':
      return result !== c.value;
  }
}

export type MeasurementOutcome = 'Passed' | 'Failed' | 'Inconclusive';

/**
 * The outcome of one value: the failure condition wins; with only one condition given, the
 * other outcome is its negation; with both given and neither holding, Inconclusive. NaN and
 * infinities are Inconclusive (a ratio over no traffic proves nothing).
 */
export function judge(
  conditions: { successCondition?: string | undefined; failureCondition?: string | undefined },
  result: number,
): MeasurementOutcome {
  if (!Number.isFinite(result)) return 'Inconclusive';
  const parse = (t: string | undefined) => {
    if (t === undefined) return undefined;
    const c = parseCondition(t);
    return typeof c === 'string' ? undefined : c;
  };
  const success = parse(conditions.successCondition);
  const failure = parse(conditions.failureCondition);
  if (failure && holds(failure, result)) return 'Failed';
  if (success && holds(success, result)) return 'Passed';
  if (success && failure) return 'Inconclusive';
  return success ? 'Failed' : 'Passed';
}

/** The query with its placeholders replaced (names are DNS labels: safe inside PromQL quotes). */
export function renderQuery(template: string, values: Readonly<Record<AnalysisPlaceholder, string>>): string {
  return template.replace(PLACEHOLDER, (_, name: string) => values[name as AnalysisPlaceholder] ?? '');
}

const CLOSER: Record<string, string> = { '(': ')', '[': ']', '{': '}' };

/** The first placeholder that is not one of ANALYSIS_PLACEHOLDERS, explained. */
function unknownPlaceholder(template: string): string | undefined {
  for (const m of template.matchAll(PLACEHOLDER)) {
    const name = m[1]!;
    if (!(ANALYSIS_PLACEHOLDERS as readonly string[]).includes(name)) {
      return `unknown placeholder {{${name}}}; known: ${ANALYSIS_PLACEHOLDERS.map((p) => `{{${p}}}`).join(', ')}`;
    }
  }
  return undefined;
}

/** The index of the quote closing the string opened at `i` (escapes inside "…" and '…'), or -1. */
function stringEnd(text: string, i: number): number {
  const quote = text[i]!;
  let j = i + 1;
  while (j < text.length && text[j] !== quote) j += quote !== '`' && text[j] === '\\' ? 2 : 1;
  return j < text.length ? j : -1;
}

/** Brackets balanced outside strings and comments; strings closed. */
function unbalanced(text: string): string | undefined {
  const stack: string[] = [];
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (ch === '"' || ch === "'" || ch === '`') {
      i = stringEnd(text, i);
      if (i < 0) return `a string is not closed`;
    } else if (ch === '#') {
      while (i < text.length && text[i] !== '\n') i++;
    } else if (CLOSER[ch]) stack.push(CLOSER[ch]);
    else if ((ch === ')' || ch === ']' || ch === '}') && stack.pop() !== ch) {
      return `unbalanced "${ch}" at position ${i + 1}`;
    }
  }
  return stack.length > 0 ? `"${stack[stack.length - 1]}" missing at the end` : undefined;
}

/**
 * A minimal offline syntax check of a PromQL template: not blank, only known placeholders,
 * brackets balanced and strings closed. Anything subtler is Prometheus's to refuse, which the
 * runner reports as an inconclusive measurement.
 */
export function checkQueryTemplate(template: string): string | undefined {
  if (template.trim() === '') return 'must not be empty';
  return unknownPlaceholder(template) ?? unbalanced(template.replace(PLACEHOLDER, 'x'));
}

export interface AnalysisQueryLike {
  name: string;
  query: string;
  successCondition?: string | undefined;
  failureCondition?: string | undefined;
}

/** The checks the schema cannot express, for the analysis at `path`. */
export function validateAnalysis(analysis: { queries: readonly AnalysisQueryLike[] }, path: string): FieldError[] {
  const errors: FieldError[] = [];
  const names = new Set<string>();
  analysis.queries.forEach((q, i) => {
    const qp = indexPath(childPath(path, 'queries'), i);
    if (names.has(q.name))
      errors.push({ path: childPath(qp, 'name'), code: 'Duplicate', message: `Duplicate value: "${q.name}"` });
    names.add(q.name);
    const bad = checkQueryTemplate(q.query);
    if (bad) errors.push(invalid(childPath(qp, 'query'), q.query, bad));
    if (q.successCondition === undefined && q.failureCondition === undefined) {
      errors.push(required(childPath(qp, 'successCondition'), 'give a successCondition, a failureCondition or both'));
    }
    for (const key of ['successCondition', 'failureCondition'] as const) {
      const text = q[key];
      if (text === undefined) continue;
      const c = parseCondition(text);
      if (typeof c === 'string') errors.push(invalid(childPath(qp, key), text, c));
    }
  });
  return errors;
}

/**
 * A cluster's Prometheus URL: http(s), no credentials (user info), no query or fragment. The
 * hub shows it in the cluster's status, so a secret must never be part of it.
 */
export function validatePrometheusUrl(url: string, path: string): FieldError[] {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return [invalid(path, url, 'must be an absolute http or https URL')];
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return [invalid(path, url, 'must be an http or https URL')];
  if (u.username || u.password) {
    return [invalid(path, 'a URL with credentials', 'must not carry credentials (user:password@)')];
  }
  if (u.search || u.hash) return [invalid(path, url, 'must have no query or fragment')];
  return [];
}

/** How the hub reaches a cluster's Prometheus: the URL and the references of what it needs. */
export interface PrometheusConnection {
  url: string | null;
  tokenRef?: string | null | undefined;
  basicAuth?: { usernameRef: string; passwordRef: string } | null | undefined;
  caRef?: string | null | undefined;
}

/**
 * The checks across fields the schema cannot express: a URL as validatePrometheusUrl wants it;
 * credentials and a CA only with a URL; one kind of credentials (a bearer token or basic auth,
 * not both: Prometheus takes one Authorization header); a CA only for an https URL.
 */
export function validatePrometheusConnection(c: PrometheusConnection): FieldError[] {
  const given = (['tokenRef', 'basicAuth', 'caRef'] as const).filter((k) => c[k] !== undefined && c[k] !== null);
  if (c.url === null) return given.map((k) => forbidden(k, 'needs a url'));
  const errors = validatePrometheusUrl(c.url, 'url');
  if (given.includes('tokenRef') && given.includes('basicAuth')) {
    errors.push(forbidden('basicAuth', 'give a tokenRef or basicAuth, not both'));
  }
  if (given.includes('caRef') && errors.length === 0 && new URL(c.url).protocol !== 'https:') {
    errors.push(forbidden('caRef', 'a CA verifies an https url only'));
  }
  return errors;
}
