/**
 * The expression language of SidecarSet `resourcesPolicy.resourcesExpr` (OpenKruise v1.9,
 * pkg/util/calculator): `+ - * /`, parentheses, unary minus, `max(a, b)`, `min(a, b)`, numbers
 * (`2`, `1.5`, `50%` = 0.5), quantities (`100m`, `512Mi`) and the variables `cpu` / `memory`.
 *
 * How values combine, as OpenKruise's calculator does: a quantity is held in milli-units (its
 * MilliValue); `+`/`-`/`max`/`min` with a quantity on either side promote the number to a
 * quantity (n × 1000 milli, truncated); `*` and `/` take a quantity and a number and truncate the
 * milli result; two quantities cannot be multiplied, nothing divides by a quantity or by zero, and
 * a negative result is an error. The result keeps the left quantity's format (binary `Mi` stays
 * binary), which only changes how it is written.
 */
import { BINARY_SUFFIXES, DECIMAL_SUFFIXES } from '../../revision/quantity.js';

export type QuantityFormat = 'DecimalSI' | 'BinarySI';

export type ExprValue = { number: number } | { milli: bigint; format: QuantityFormat };

export class ResourceExprError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ResourceExprError';
  }
}

/** A quantity text as milli-units (rounded up below a milli, as Go's MilliValue), or undefined. */
export function parseQuantityMilli(text: string): { milli: bigint; format: QuantityFormat } | undefined {
  const m = /^\+?([0-9]+(?:\.[0-9]*)?|\.[0-9]+)([a-zA-Z]*)$/.exec(text.trim());
  if (!m) return undefined;
  const [, num = '', suffix = ''] = m;
  const [whole = '', frac = ''] = num.split('.');
  const digits = BigInt((whole || '0') + frac);
  const scale = frac.length;
  if (suffix in BINARY_SUFFIXES) {
    const bytesScaled = digits * 1000n * 2n ** BigInt(BINARY_SUFFIXES[suffix] ?? 0);
    return { milli: ceilDiv(bytesScaled, 10n ** BigInt(scale)), format: 'BinarySI' };
  }
  const exp = DECIMAL_SUFFIXES[suffix];
  if (exp === undefined) return undefined;
  const power = exp + 3 - scale;
  const milli = power >= 0 ? digits * 10n ** BigInt(power) : ceilDiv(digits, 10n ** BigInt(-power));
  return { milli, format: 'DecimalSI' };
}

const ceilDiv = (a: bigint, b: bigint): bigint => (a + b - 1n) / b;

/** A milli-unit amount written as Go writes a Quantity of that format (canonical form). */
export function formatMilli(milli: bigint, format: QuantityFormat): string {
  if (milli === 0n) return '0';
  const negative = milli < 0n;
  const abs = negative ? -milli : milli;
  const sign = negative ? '-' : '';
  if (abs % 1000n === 0n) {
    const units = abs / 1000n;
    if (format === 'BinarySI' && units >= 1024n) {
      let value = units;
      let i = 0;
      const suffixes = ['', 'Ki', 'Mi', 'Gi', 'Ti', 'Pi', 'Ei'];
      while (value % 1024n === 0n && i < suffixes.length - 1) {
        value /= 1024n;
        i++;
      }
      // Go writes a binary quantity of at least 1Ki in powers of 1024, even with no suffix ("2000").
      return `${sign}${value}${suffixes[i]}`;
    }
    let value = units;
    let i = 0;
    const suffixes = ['', 'k', 'M', 'G', 'T', 'P', 'E'];
    while (value % 1000n === 0n && i < suffixes.length - 1) {
      value /= 1000n;
      i++;
    }
    return `${sign}${value}${suffixes[i]}`;
  }
  return `${sign}${abs}m`;
}

type Token = { kind: 'num' | 'qty' | 'ident' | 'op'; text: string };

function tokenize(input: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < input.length) {
    const ch = input[i] ?? '';
    if (/\s/.test(ch)) {
      i++;
      continue;
    }
    if ('+-*/(),'.includes(ch)) {
      tokens.push({ kind: 'op', text: ch });
      i++;
      continue;
    }
    const number = /^(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?(%|[a-zA-Z]+)?/.exec(input.slice(i));
    if (number) {
      const unit = number[1];
      tokens.push({ kind: unit && unit !== '%' ? 'qty' : 'num', text: number[0] });
      i += number[0].length;
      continue;
    }
    const ident = /^[a-zA-Z_][a-zA-Z0-9_]*/.exec(input.slice(i));
    if (!ident) throw new ResourceExprError(`unexpected character ${JSON.stringify(ch)} at position ${i}`);
    tokens.push({ kind: 'ident', text: ident[0] });
    i += ident[0].length;
  }
  return tokens;
}

const isQty = (v: ExprValue): v is { milli: bigint; format: QuantityFormat } => 'milli' in v;
const toQty = (v: ExprValue): { milli: bigint; format: QuantityFormat } =>
  isQty(v) ? v : { milli: BigInt(Math.trunc(v.number * 1000)), format: 'DecimalSI' };
const scaleMilli = (milli: bigint, factor: number): bigint => BigInt(Math.trunc(Number(milli) * factor));

class Parser {
  private pos = 0;
  constructor(
    private readonly tokens: Token[],
    private readonly vars: Readonly<Record<string, ExprValue>>,
  ) {}

  parse(): ExprValue {
    const value = this.expr();
    const rest = this.tokens[this.pos];
    if (rest) throw new ResourceExprError(`syntax error: unexpected ${JSON.stringify(rest.text)}`);
    return value;
  }

  private peek(text: string): boolean {
    const t = this.tokens[this.pos];
    return t?.kind === 'op' && t.text === text;
  }

  private expect(text: string): void {
    if (!this.peek(text)) {
      const got = this.tokens[this.pos]?.text;
      throw new ResourceExprError(
        `syntax error: expected ${JSON.stringify(text)}${got ? ` before ${JSON.stringify(got)}` : ' at the end'}`,
      );
    }
    this.pos++;
  }

  private expr(): ExprValue {
    let left = this.term();
    while (this.peek('+') || this.peek('-')) {
      const op = this.tokens[this.pos++]?.text;
      const right = this.term();
      left = op === '+' ? add(left, right, 1n) : add(left, right, -1n);
    }
    return left;
  }

  private term(): ExprValue {
    let left = this.factor();
    while (this.peek('*') || this.peek('/')) {
      const op = this.tokens[this.pos++]?.text;
      const right = this.factor();
      left = op === '*' ? mul(left, right) : div(left, right);
    }
    return left;
  }

  private factor(): ExprValue {
    const t = this.tokens[this.pos];
    if (!t) throw new ResourceExprError('syntax error: unexpected end of expression');
    this.pos++;
    if (t.kind === 'num') {
      const percent = t.text.endsWith('%');
      const n = Number(percent ? t.text.slice(0, -1) : t.text);
      return { number: percent ? n / 100 : n };
    }
    if (t.kind === 'qty') {
      const q = parseQuantityMilli(t.text);
      if (!q) throw new ResourceExprError(`invalid quantity ${JSON.stringify(t.text)}`);
      return q;
    }
    if (t.kind === 'ident') {
      if (this.peek('(')) return this.call(t.text);
      const v = this.vars[t.text.toLowerCase()];
      if (!v) throw new ResourceExprError(`undefined variable: ${t.text}`);
      return v;
    }
    if (t.text === '(') {
      const v = this.expr();
      this.expect(')');
      return v;
    }
    if (t.text === '-') {
      const v = this.factor();
      return isQty(v) ? { ...v, milli: -v.milli } : { number: -v.number };
    }
    throw new ResourceExprError(`syntax error: unexpected ${JSON.stringify(t.text)}`);
  }

  private call(name: string): ExprValue {
    this.expect('(');
    const args = [this.expr()];
    if (this.peek(',')) {
      this.pos++;
      args.push(this.expr());
    }
    this.expect(')');
    const fn = name.toLowerCase();
    if (fn !== 'max' && fn !== 'min') throw new ResourceExprError(`unknown function: ${name}`);
    const [a, b] = args;
    if (!a || !b) throw new ResourceExprError(`${fn} function requires exactly 2 arguments, got ${args.length}`);
    if (!isQty(a) && !isQty(b)) {
      return { number: fn === 'max' ? Math.max(a.number, b.number) : Math.min(a.number, b.number) };
    }
    const [qa, qb] = [toQty(a), toQty(b)];
    const pickA = fn === 'max' ? qa.milli >= qb.milli : qa.milli <= qb.milli;
    return pickA ? qa : qb;
  }
}

function add(a: ExprValue, b: ExprValue, sign: bigint): ExprValue {
  if (!isQty(a) && !isQty(b)) return { number: a.number + Number(sign) * b.number };
  const [qa, qb] = [toQty(a), toQty(b)];
  // Go's Quantity.Add takes the other side's format when the receiver is zero.
  return { milli: qa.milli + sign * qb.milli, format: qa.milli === 0n ? qb.format : qa.format };
}

function mul(a: ExprValue, b: ExprValue): ExprValue {
  if (isQty(a) && isQty(b)) throw new ResourceExprError('multiplication of two quantities');
  if (isQty(a)) return { milli: scaleMilli(a.milli, (b as { number: number }).number), format: a.format };
  if (isQty(b)) return { milli: scaleMilli(b.milli, a.number), format: b.format };
  return { number: a.number * b.number };
}

function div(a: ExprValue, b: ExprValue): ExprValue {
  if (isQty(b)) throw new ResourceExprError('division by quantity');
  if (b.number === 0) throw new ResourceExprError('division by zero');
  if (isQty(a)) return { milli: scaleMilli(a.milli, 1 / b.number), format: a.format };
  return { number: a.number / b.number };
}

/** Evaluates `expr` with the given variables (lower-case names). Throws ResourceExprError. */
export function evaluateResourceExpr(expr: string, vars: Readonly<Record<string, ExprValue>>): ExprValue {
  const result = new Parser(tokenize(expr), vars).parse();
  if (isQty(result) ? result.milli < 0n : result.number < 0) {
    throw new ResourceExprError(
      `calculation result is negative: ${isQty(result) ? formatMilli(result.milli, result.format) : result.number}`,
    );
  }
  return result;
}

/** The variable an expression binds: `memory` when that word appears, else `cpu` (as OpenKruise). */
export function expressionVariable(expr: string): 'cpu' | 'memory' {
  return /\bmemory\b/.test(expr) ? 'memory' : 'cpu';
}

/**
 * The resource quantity text an expression yields for `aggregate` (milli-units of the target
 * containers' cpu or memory). A plain-number result is cpu cores or memory bytes.
 */
export function computeResource(expr: string, aggregate: { milli: bigint; format: QuantityFormat }): string {
  const variable = expressionVariable(expr);
  const result = evaluateResourceExpr(expr, { [variable]: aggregate });
  if (isQty(result)) return formatMilli(result.milli, result.format);
  const milli =
    variable === 'cpu' ? BigInt(Math.trunc(result.number * 1000)) : BigInt(Math.trunc(result.number)) * 1000n;
  return formatMilli(milli, 'DecimalSI');
}
