import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { get } from './http.js';
import { freePort } from './ports.js';
import { startProcess, waitFor, type ManagedProcess } from './process.js';
import { toolPath } from './tools.js';

export interface Etcd {
  endpoint: string;
  process: ManagedProcess;
  stop(): Promise<void>;
}

/**
 * One etcd serves every cluster of a run; each apiserver keeps its objects under its own
 * --etcd-prefix. Data lives in `dataDir` (tmpfs is fastest) and is thrown away with the run.
 */
export async function startEtcd(opts: { dataDir: string; logDir: string; name?: string }): Promise<Etcd> {
  const name = opts.name ?? 'etcd';
  const [client, peer] = [await freePort(), await freePort()];
  mkdirSync(opts.dataDir, { recursive: true });
  const clientUrl = `http://127.0.0.1:${client}`;
  const peerUrl = `http://127.0.0.1:${peer}`;
  const proc = startProcess({
    name,
    command: toolPath('etcd'),
    args: [
      '--name=e0',
      `--data-dir=${opts.dataDir}`,
      `--listen-client-urls=${clientUrl}`,
      `--advertise-client-urls=${clientUrl}`,
      `--listen-peer-urls=${peerUrl}`,
      `--initial-advertise-peer-urls=${peerUrl}`,
      `--initial-cluster=e0=${peerUrl}`,
      '--unsafe-no-fsync',
      '--log-level=warn',
      '--quota-backend-bytes=4294967296',
    ],
    logFile: path.join(opts.logDir, `${name}.log`),
  });
  await waitFor(name, async () => (await get(`${clientUrl}/health`)).body.includes('"true"'), {
    timeoutMs: 30_000,
    process: proc,
  });
  return { endpoint: clientUrl, process: proc, stop: () => proc.stop() };
}
