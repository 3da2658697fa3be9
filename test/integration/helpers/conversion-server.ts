/**
 * The run's conversion webhook: the agent's own webhook server (which answers ConversionReviews at
 * /convert with api's converters) in a process of its own on 127.0.0.1, started by global-setup
 * and alive for the whole run. Every suite installs the CRDs pointing at it (crds.ts), so objects
 * of a kind converted by webhook (SidecarSet) can be read and written at both versions whether or
 * not the suite runs an agent, and no suite's agent has to outlive another's. Agent replicas in
 * tests run with publishConversion=false and leave the CRDs' clientConfig to this server, except
 * where a test checks the agent's own publishing.
 *
 * Run as a script (`node --conditions=@flotilla/source --import tsx conversion-server.ts`) it
 * prints one JSON line `{"url","caPem"}` once listening and serves until killed.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

export interface ConversionServerInfo {
  /** Base URL; the CRDs call `<url>/convert`. */
  url: string;
  caPem: string;
}

async function serve(): Promise<void> {
  const { pino } = await import('pino');
  const { createCa, createServingCert } = await import('../../../agent/src/webhook/certs/pki.js');
  const { WebhookServer } = await import('../../../agent/src/webhook/server.js');
  const now = Date.now();
  const day = 24 * 3600_000;
  const ca = await createCa('flotilla-test-conversion-ca', now, 7 * day);
  const tls = await createServingCert(ca, ['127.0.0.1'], now, 7 * day);
  const server = new WebhookServer({ host: '127.0.0.1', port: 0, logger: pino({ level: 'silent' }) });
  server.setTls(tls);
  const port = await server.listen();
  const info: ConversionServerInfo = { url: `https://127.0.0.1:${port}`, caPem: ca.certPem };
  process.stdout.write(`${JSON.stringify(info)}\n`);
}

/** Starts the server process; resolves with where it listens and a stop function. */
export async function startConversionServer(): Promise<ConversionServerInfo & { stop(): Promise<void> }> {
  const child: ChildProcess = spawn(
    process.execPath,
    ['--conditions=@flotilla/source', '--import', 'tsx', fileURLToPath(import.meta.url)],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const lines = createInterface({ input: child.stdout! });
  const info = await new Promise<ConversionServerInfo>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`conversion server exited with ${code} before listening`)));
    lines.once('line', (line) => resolve(JSON.parse(line) as ConversionServerInfo));
  });
  return {
    ...info,
    stop: async () => {
      if (child.exitCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    },
  };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  serve().catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
}
