/**
 * The kinds of setting text (setting.ts): each reads a trimmed text into a value or reports what
 * it expected. Names follow Kubernetes' rules (api's validation).
 */
import { dns1123LabelErrors, dns1123SubdomainErrors, labelValueErrors, qualifiedNameErrors } from '@flotilla/api';
import type { Kind } from './setting.js';

/** `must be <expected>, got "<text>"`. */
const expected = (what: string, text: string): string => `must be ${what}, got "${text}"`;

/** Any text. */
export function text(arg = 'value'): Kind<string> {
  return { arg, parse: (t) => t };
}

/** A text `test` accepts; `what` says what was expected. */
export function matching(test: RegExp | ((text: string) => boolean), what: string, arg = 'value'): Kind<string> {
  const ok = typeof test === 'function' ? test : (t: string) => test.test(t);
  return {
    arg,
    parse: (t, problem) => {
      if (ok(t)) return t;
      problem(expected(what, t));
      return undefined;
    },
  };
}

/** A DNS-1123 label (a namespace or cluster name). */
export const isDnsLabel = (t: string): boolean => dns1123LabelErrors(t).length === 0;

/** A DNS-1123 subdomain (most objects' names). */
export const isDnsSubdomain = (t: string): boolean => dns1123SubdomainErrors(t).length === 0;

export function dnsLabel(arg = 'name'): Kind<string> {
  return matching(isDnsLabel, "a DNS label (lower-case letters, digits, '-')", arg);
}

/** An object name; `what` names it in problems (`a DNS name`, `a node name`). */
export function dnsSubdomain(what: string, arg = 'name'): Kind<string> {
  return matching(isDnsSubdomain, what, arg);
}

/** A whole number from `min` to `max`; `what` replaces "an integer min-max" in problems. */
export function int(min: number, max: number, what = `an integer ${min}-${max}`, arg = 'n'): Kind<number> {
  return {
    arg,
    parse: (t, problem) => {
      const n = Number(t);
      if (/^\d+$/.test(t) && n >= min && n <= max) return n;
      problem(expected(what, t));
      return undefined;
    },
  };
}

/** -1 for "no limit", or a whole number from 1 to `max` (0 would stop everything, so it is refused). */
export function limit(max: number, arg = 'n'): Kind<number> {
  const what = `-1 (no limit) or an integer 1-${max}`;
  return {
    arg,
    parse: (t, problem) => {
      if (t === '-1') return -1;
      const n = Number(t);
      if (/^\d+$/.test(t) && n >= 1 && n <= max) return n;
      problem(expected(what, t));
      return undefined;
    },
  };
}

/** A TCP port; 0 lets the system pick one. */
export function port(): Kind<number> {
  return int(0, 65535, 'a port number 0-65535', 'port');
}

/** `true` or `false`. */
export function bool(): Kind<boolean> {
  return {
    arg: 'true|false',
    parse: (t, problem) => {
      if (t === 'true' || t === 'false') return t === 'true';
      problem(expected('true or false', t));
      return undefined;
    },
  };
}

/** One of `values`. */
export function oneOf<T extends string>(values: readonly T[], arg = values.join('|')): Kind<T> {
  const what = values.length === 2 ? `${values[0]} or ${values[1]}` : `one of ${values.join(', ')}`;
  return {
    arg,
    parse: (t, problem) => {
      if ((values as readonly string[]).includes(t)) return t as T;
      problem(expected(what, t));
      return undefined;
    },
  };
}

const UNITS: Readonly<Record<string, number>> = { h: 3_600_000, m: 60_000, s: 1000, ms: 1 };

/** `500ms`, `15s`, `2m`, `1h`, in milliseconds; a bare number means seconds. */
export function duration(): Kind<number> {
  return {
    arg: 'duration',
    parse: (t, problem) => {
      const m = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/.exec(t);
      if (m && Number(m[1]) > 0) return Math.round(Number(m[1]) * UNITS[m[2] ?? 's']!);
      problem(expected('a positive duration like 500ms, 15s or 2m', t));
      return undefined;
    },
    show: (ms) => {
      const [unit, size] = Object.entries(UNITS).find(([, size]) => ms % size === 0)!;
      return `${ms / size}${unit}`;
    },
  };
}

/**
 * A comma-separated list, items trimmed, empty ones dropped; an empty text is an empty list.
 * `item` checks each one (`what` names it in problems: `"x" is not a namespace name`).
 */
export function list(arg = 'list', item?: { test: (t: string) => boolean; what: string }): Kind<string[]> {
  return {
    arg,
    emptyIsValue: true,
    parse: (t, problem) => {
      const items = t
        .split(',')
        .map((i) => i.trim())
        .filter((i) => i !== '');
      for (const i of items) if (item && !item.test(i)) problem(`"${i}" is not ${item.what}`);
      return items;
    },
    show: (items) => items.join(','),
  };
}

/** `k=v,k=v` with Kubernetes label syntax (an empty value is allowed). */
export function labels(): Kind<Record<string, string>> {
  return {
    arg: 'k=v,...',
    parse: (t, problem) => {
      const out: Record<string, string> = {};
      for (const pair of t.split(',').map((p) => p.trim())) {
        if (pair === '') continue;
        const eq = pair.indexOf('=');
        const key = pair.slice(0, eq).trim();
        const value = pair.slice(eq + 1).trim();
        if (eq < 0 || qualifiedNameErrors(key).length > 0 || labelValueErrors(value).length > 0) {
          problem(`"${pair}" is not a label key=value`);
        } else if (key in out) {
          problem(`label ${key} given twice`);
        } else {
          out[key] = value;
        }
      }
      return out;
    },
  };
}

/** An http(s) URL without credentials, given back without trailing slashes. */
export function httpUrl(): Kind<string> {
  const ok = (t: string): boolean => {
    const u = URL.canParse(t) ? new URL(t) : undefined;
    return (u?.protocol === 'http:' || u?.protocol === 'https:') && u.username === '' && u.password === '';
  };
  return {
    arg: 'url',
    parse: (t, problem) => {
      if (ok(t)) return t.replace(/\/+$/, '');
      problem(expected('an http(s) URL without credentials', t));
      return undefined;
    },
  };
}
