/**
 * Output formatting, pure: tables the way kubectl prints them (upper-case headers, columns padded
 * to the widest cell, three spaces apart), JSON and YAML of the API's own objects.
 */
import YAML from 'yaml';
import { usageError } from './errors.js';

export const OUTPUT_FORMATS = ['table', 'json', 'yaml'] as const;
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];

export function parseOutputFormat(raw: string | undefined): OutputFormat {
  const v = raw ?? 'table';
  if ((OUTPUT_FORMATS as readonly string[]).includes(v)) return v as OutputFormat;
  throw usageError(`--output must be one of ${OUTPUT_FORMATS.join(', ')} (got "${v}")`);
}

export interface Column<T> {
  header: string;
  value: (row: T) => string;
}

/** Control characters (a terminal escape in a label, say) are shown escaped, never executed. */
export function cell(s: string): string {
  // eslint-disable-next-line no-control-regex -- matching control characters is the point
  return s.replace(/[\u0000-\u001f\u007f-\u009f]/g, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
}

/** A text table; every line ends with a newline, trailing blanks are trimmed. */
export function renderTable<T>(columns: Column<T>[], rows: readonly T[]): string {
  const cells = [columns.map((c) => c.header.toUpperCase()), ...rows.map((r) => columns.map((c) => cell(c.value(r))))];
  const widths = columns.map((_, i) => Math.max(...cells.map((line) => line[i]!.length)));
  return cells
    .map(
      (line) =>
        line
          .map((v, i) => v.padEnd(widths[i]!))
          .join('   ')
          .trimEnd() + '\n',
    )
    .join('');
}

/** JSON (2-space indent) or YAML of any API object, with a final newline. */
export function renderData(format: 'json' | 'yaml', value: unknown): string {
  return format === 'json' ? `${JSON.stringify(value, null, 2)}\n` : YAML.stringify(value);
}

/** `k=v,k2=v2` (sorted by key), `<none>` when empty. */
export function labelsText(labels: Record<string, string> | undefined): string {
  const entries = Object.entries(labels ?? {}).sort(([a], [b]) => a.localeCompare(b));
  return entries.length === 0 ? '<none>' : entries.map(([k, v]) => `${k}=${v}`).join(',');
}

/** `45s`, `12m`, `3h`, `4d` since `iso` (kubectl's short ages); `<never>` for null. */
export function age(iso: string | null | undefined, now: Date): string {
  if (!iso) return '<never>';
  const s = Math.max(0, Math.floor((now.getTime() - Date.parse(iso)) / 1000));
  if (Number.isNaN(s)) return '<unknown>';
  if (s < 120) return `${s}s`;
  if (s < 7200) return `${Math.floor(s / 60)}m`;
  if (s < 172_800) return `${Math.floor(s / 3600)}h`;
  return `${Math.floor(s / 86_400)}d`;
}

/** `-` for null/undefined/empty, otherwise the value as text. */
export function orDash(v: string | number | null | undefined): string {
  return v === null || v === undefined || v === '' ? '-' : String(v);
}
