/**
 * A real Prometheus (Debian's `prometheus` package) on a free loopback port with its own config
 * and storage, scraping test exporters: tiny HTTP servers whose /metrics the test sets. Used by
 * the metric-analysis tests (docs/adr/0017).
 *
 *   const exporter = await startExporter();
 *   exporter.set('flotilla_test_error_ratio', 0.01);
 *   const prom = await startPrometheus({ dir, targets: [{ target: exporter.host, labels: { cluster: 'c1' } }] });
 *   await prom.waitForValue('flotilla_test_error_ratio{cluster="c1"}', 0.01);
 *
 * With `tls` and `basicAuth` it serves https and asks for a user (Prometheus's --web.config.file).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import http, { createServer } from 'node:http';
import https from 'node:https';
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
  /** Serve https with this certificate (e.g. issued by the test PKI, pki.ts). */
  tls?: { certFile: string; keyFile: string; caPem: string };
  /** Ask every request for this user's basic auth. */
  basicAuth?: BasicAuthUser;
}

/** A basic-auth user of a Prometheus's web config: the password and its bcrypt hash. */
export interface BasicAuthUser {
  username: string;
  password: string;
  bcrypt: string;
}

/**
 * The test user. Prometheus stores only bcrypt hashes; this one (cost 4, the minimum, so each
 * check is cheap) was made once with Python's crypt.crypt(password, mksalt(METHOD_BLOWFISH, rounds=16)).
 */
export const PROMETHEUS_TEST_USER: BasicAuthUser = {
  username: 'flotilla',
  password: 'flotilla-prom-pass',
  bcrypt: '$2b$04$WxqAnIU8Kw7B.Vflf5lLEe4Mjty6lq/tkM18YFT9UZ1.PdX6OzWbq',
};

/** A GET with the CA and credentials the Prometheus wants: status and body. */
function get(url: string, opts: PrometheusOptions): Promise<{ status: number; body: string }> {
  const headers: Record<string, string> = {};
  if (opts.basicAuth) {
    const pair = `${opts.basicAuth.username}:${opts.basicAuth.password}`;
    headers.authorization = `Basic ${Buffer.from(pair).toString('base64')}`;
  }
  return new Promise((resolve, reject) => {
    const onResponse = (res: http.IncomingMessage) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    };
    const req = opts.tls
      ? https.get(url, { headers, ca: opts.tls.caPem }, onResponse)
      : http.get(url, { headers }, onResponse);
    req.on('error', reject);
  });
}

/** The web config file Prometheus reads (--web.config.file), or undefined for plain http. */
function writeWebConfig(opts: PrometheusOptions): string | undefined {
  if (!opts.tls && !opts.basicAuth) return undefined;
  const web = {
    ...(opts.tls ? { tls_server_config: { cert_file: opts.tls.certFile, key_file: opts.tls.keyFile } } : {}),
    ...(opts.basicAuth ? { basic_auth_users: { [opts.basicAuth.username]: opts.basicAuth.bcrypt } } : {}),
  };
  const file = path.join(opts.dir, 'web.yml');
  writeFileSync(file, JSON.stringify(web, null, 2));
  return file;
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
  const webConfig = writeWebConfig(opts);
  const port = await freePort();
  const url = `${opts.tls ? 'https' : 'http'}://127.0.0.1:${port}`;
  const proc = startProcess({
    name,
    command: COMMAND,
    args: [
      `--config.file=${configFile}`,
      `--storage.tsdb.path=${data}`,
      `--web.listen-address=127.0.0.1:${port}`,
      '--storage.tsdb.retention.time=1h',
      ...(webConfig ? [`--web.config.file=${webConfig}`] : []),
    ],
    logFile: path.join(opts.dir, 'prometheus.log'),
  });
  await waitFor(name, async () => (await get(`${url}/-/ready`, opts)).status === 200, {
    timeoutMs: 60_000,
    process: proc,
  });
  const query = async (q: string): Promise<number | undefined> => {
    const res = await get(`${url}/api/v1/query?query=${encodeURIComponent(q)}`, opts);
    const body = JSON.parse(res.body) as { data?: { result?: { value: [number, string] }[] } };
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
