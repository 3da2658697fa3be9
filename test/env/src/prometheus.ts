/**
 * A real Prometheus (Debian's `prometheus` package) on a free loopback port with its own config
 * and storage, scraping test exporters: tiny HTTP servers whose /metrics the test sets. Used by
 * the metric-analysis tests (docs/adr/0017).
 *
 *   const exporter = await startExporter();
 *   exporter.set('flotilla_test_error_ratio', 0.01);
 *   const prom = await startPrometheus({ dir, targets: [{ target: exporter.host, labels: { cluster: 'c1' } }] });
 *   await prom.waitForValue('flotilla_test_error_ratio{cluster="c1"}', 0.01);
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { HarnessError } from './errors.js';
import { freePort } from './ports.js';
import { startProcess, waitFor, type ManagedProcess } from './process.js';

const COMMAND = '/usr/bin/prometheus';

export interface ScrapeTarget {
  /** `host:port` of an exporter. */
  target: string;
  /** Labels Prometheus adds to every series of the target (e.g. `cluster`). */
  labels?: Record<string, string>;
}

export interface PrometheusOptions {
  /** State directory: config, TSDB, log. */
  dir: string;
  targets: ScrapeTarget[];
  /** Default 1 s, so a value the test sets is visible within about a second. */
  scrapeIntervalSeconds?: number;
  name?: string;
}

export interface Prometheus {
  /** `http://127.0.0.1:<port>`. */
  url: string;
  process: ManagedProcess;
  /** The value of an instant query now: the first series' value, or undefined without data. */
  query(query: string): Promise<number | undefined>;
  /** Waits until the instant query reports `value` (a scrape of what the test set happened). */
  waitForValue(query: string, value: number, timeoutMs?: number): Promise<void>;
  stop(): Promise<void>;
}

export async function startPrometheus(opts: PrometheusOptions): Promise<Prometheus> {
  const name = opts.name ?? 'prometheus';
  const data = path.join(opts.dir, 'data');
  mkdirSync(data, { recursive: true });
  const interval = `${opts.scrapeIntervalSeconds ?? 1}s`;
  const config = {
    global: { scrape_interval: interval, evaluation_interval: interval },
    scrape_configs: [
      {
        job_name: 'exporters',
        static_configs: opts.targets.map((t) => ({ targets: [t.target], labels: t.labels ?? {} })),
      },
    ],
  };
  const configFile = path.join(opts.dir, 'prometheus.yml');
  // JSON is YAML: no YAML writer needed.
  writeFileSync(configFile, JSON.stringify(config, null, 2));
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const proc = startProcess({
    name,
    command: COMMAND,
    args: [
      `--config.file=${configFile}`,
      `--storage.tsdb.path=${data}`,
      `--web.listen-address=127.0.0.1:${port}`,
      '--storage.tsdb.retention.time=1h',
    ],
    logFile: path.join(opts.dir, 'prometheus.log'),
  });
  await waitFor(name, async () => (await fetch(`${url}/-/ready`)).status === 200, { timeoutMs: 60_000, process: proc });
  const query = async (q: string): Promise<number | undefined> => {
    const res = await fetch(`${url}/api/v1/query?query=${encodeURIComponent(q)}`);
    const body = (await res.json()) as { data?: { result?: { value: [number, string] }[] } };
    const first = body.data?.result?.[0];
    return first ? Number(first.value[1]) : undefined;
  };
  return {
    url,
    process: proc,
    query,
    async waitForValue(q, value, timeoutMs = 30_000) {
      await waitFor(`${name} query ${q} = ${value}`, async () => (await query(q)) === value, {
        timeoutMs,
        process: proc,
      });
    },
    stop: () => proc.stop(),
  };
}

export interface Exporter {
  /** `127.0.0.1:<port>`, a scrape target. */
  host: string;
  /** Sets a gauge (no labels) the exporter serves from now on. */
  set(metric: string, value: number): void;
  stop(): Promise<void>;
}

/** A test exporter: serves the gauges the test set, in the Prometheus text format. */
export async function startExporter(): Promise<Exporter> {
  const gauges = new Map<string, number>();
  const server = createServer((req, res) => {
    if (req.url !== '/metrics') {
      res.writeHead(404).end();
      return;
    }
    const lines = [...gauges].flatMap(([m, v]) => [`# TYPE ${m} gauge`, `${m} ${v}`]);
    res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4' }).end(lines.join('\n') + '\n');
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const { port } = server.address() as AddressInfo;
  return {
    host: `127.0.0.1:${port}`,
    set(metric, value) {
      if (!/^[a-zA-Z_:][a-zA-Z0-9_:]*$/.test(metric))
        throw new HarnessError('START_FAILED', 'exporter', `bad metric name ${metric}`);
      gauges.set(metric, value);
    },
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
