// Prometheus text samples for the webhook bench: histograms and counters read before and after a
// phase, turned into the phase's own quantiles (histogram_quantile over the difference).
import https from 'node:https';
import type { KubeConfig } from '@kubernetes/client-node';

export const round = (n: number, digits = 2): number => Math.round(n * 10 ** digits) / 10 ** digits;

export interface HistogramSample {
  buckets: Map<number, number>;
  sum: number;
  count: number;
}

/** A /metrics text and the helpers to read it. */
export class MetricsText {
  constructor(readonly text: string) {}

  /** Sum of the samples of `name` (no suffix) whose label set contains `match`. */
  value(name: string, match = ''): number {
    let total = 0;
    for (const line of this.text.split('\n')) {
      if (line.startsWith('#')) continue;
      const series = line.slice(0, line.lastIndexOf(' '));
      const bare = series.includes('{') ? series.slice(0, series.indexOf('{')) : series;
      if (bare !== name || !series.includes(match)) continue;
      total += Number(line.slice(line.lastIndexOf(' ') + 1));
    }
    return total;
  }

  /** Every sample of `name` (no suffix): its labels and value. */
  series(name: string): { labels: Record<string, string>; value: number }[] {
    const out: { labels: Record<string, string>; value: number }[] = [];
    for (const line of this.text.split('\n')) {
      if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
      const labels: Record<string, string> = {};
      const body = line.includes('{') ? line.slice(line.indexOf('{') + 1, line.lastIndexOf('}')) : '';
      for (const m of body.matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[m[1]!] = m[2]!;
      out.push({ labels, value: Number(line.slice(line.lastIndexOf(' ') + 1)) });
    }
    return out;
  }

  /** Cumulative buckets (upper bound in s → count), sum and count of the series of `name` containing every `match`. */
  histogram(name: string, ...match: string[]): HistogramSample {
    const buckets = new Map<number, number>();
    let sum = 0;
    let count = 0;
    for (const line of this.text.split('\n')) {
      if (!line.startsWith(name) || !match.every((m) => line.includes(m))) continue;
      const value = Number(line.slice(line.lastIndexOf(' ') + 1));
      const le = /le="([^"]+)"/.exec(line)?.[1];
      if (line.startsWith(`${name}_bucket`) && le) {
        const bound = le === '+Inf' ? Infinity : Number(le);
        buckets.set(bound, (buckets.get(bound) ?? 0) + value);
      } else if (line.startsWith(`${name}_sum`)) sum += value;
      else if (line.startsWith(`${name}_count`)) count += value;
    }
    return { buckets, sum, count };
  }
}

export async function agentMetrics(port: number): Promise<MetricsText> {
  return new MetricsText(await (await fetch(`http://127.0.0.1:${port}/metrics`)).text());
}

/** The apiserver's /metrics (admin credentials from the kubeconfig). */
export async function apiserverMetrics(kc: KubeConfig): Promise<MetricsText> {
  const options: https.RequestOptions = {};
  await kc.applyToHTTPSOptions(options);
  const url = new URL(`${kc.getCurrentCluster()!.server}/metrics`);
  const text = await new Promise<string>((resolve, reject) => {
    https
      .get(url, options, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () => resolve(body));
      })
      .on('error', reject);
  });
  return new MetricsText(text);
}

/** Count, mean, p50 and p99 in ms between two samples, and the share of observations at or below each bound. */
export function quantiles(before: HistogramSample, after: HistogramSample): Record<string, unknown> {
  const n = after.count - before.count;
  const atOrBelow: Record<string, number> = {};
  for (const [bound, cumulative] of [...after.buckets].sort((a, b) => a[0] - b[0])) {
    if (bound === Infinity) continue;
    atOrBelow[`${round(bound * 1000, 3)}ms`] = round(
      (cumulative - (before.buckets.get(bound) ?? 0)) / Math.max(1, n),
      4,
    );
  }
  return {
    count: n,
    meanMs: round(((after.sum - before.sum) / Math.max(1, n)) * 1000, 3),
    p50Ms: round(histogramQuantile(before.buckets, after.buckets, 0.5), 3),
    p99Ms: round(histogramQuantile(before.buckets, after.buckets, 0.99), 3),
    shareAtOrBelow: atOrBelow,
  };
}

/** histogram_quantile over the difference of two samples: linear within the bucket, in ms. */
function histogramQuantile(before: Map<number, number>, after: Map<number, number>, q: number): number {
  const bounds = [...after.keys()].sort((a, b) => a - b);
  const counts = bounds.map((b) => (after.get(b) ?? 0) - (before.get(b) ?? 0));
  const total = counts.at(-1) ?? 0;
  const rank = q * total;
  let lower = 0;
  let below = 0;
  for (let i = 0; i < bounds.length; i++) {
    if (counts[i]! >= rank) {
      const upper = bounds[i]!;
      if (upper === Infinity) return lower * 1000;
      const inBucket = counts[i]! - below;
      return (lower + (upper - lower) * (inBucket === 0 ? 0 : (rank - below) / inBucket)) * 1000;
    }
    lower = bounds[i]!;
    below = counts[i]!;
  }
  return NaN;
}

function quantile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]!;
}

export function summary(ms: readonly number[]): { count: number; p50: number; p90: number; p99: number; max: number } {
  const s = [...ms].sort((a, b) => a - b);
  return {
    count: s.length,
    p50: round(quantile(s, 0.5)),
    p90: round(quantile(s, 0.9)),
    p99: round(quantile(s, 0.99)),
    max: round(s.at(-1) ?? NaN),
  };
}

/**
 * How much of `name` each group (the labels `by`, joined by a space) gained between two samples,
 * for the samples `keep` accepts; groups that did not change are left out.
 */
export function grownBy(
  before: MetricsText,
  after: MetricsText,
  name: string,
  by: string[],
  keep: (labels: Record<string, string>) => boolean = () => true,
): Record<string, number> {
  const total = (m: MetricsText): Map<string, number> => {
    const sums = new Map<string, number>();
    for (const { labels, value } of m.series(name)) {
      if (!keep(labels)) continue;
      const group = by.map((l) => labels[l] ?? '').join(' ');
      sums.set(group, (sums.get(group) ?? 0) + value);
    }
    return sums;
  };
  const a = total(before);
  const out: Record<string, number> = {};
  for (const [group, value] of [...total(after)].sort(([x], [y]) => (x < y ? -1 : 1))) {
    const grown = round(value - (a.get(group) ?? 0), 3);
    if (grown !== 0) out[group.trim().replace(/ +/g, ' ')] = grown;
  }
  return out;
}
