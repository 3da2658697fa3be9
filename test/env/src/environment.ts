import { mkdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startCluster, type Cluster, type ClusterOptions } from './cluster.js';
import { startEtcd, type Etcd } from './etcd.js';
import { createPki, type Pki } from './pki.js';

export interface EnvironmentOptions {
  clusters: Pick<ClusterOptions, 'name' | 'nodes' | 'apiserverArgs' | 'apiserverEnv'>[];
  /** Run directory; defaults to a fresh folder under the OS temp dir. */
  dir?: string;
  /** Keep the run directory (logs, kubeconfigs) after stop. */
  keep?: boolean;
}

export interface Environment {
  dir: string;
  pki: Pki;
  etcd: Etcd;
  clusters: Cluster[];
  /** Seconds each cluster took to start, in start order. */
  startSeconds: number[];
  stop(): Promise<void>;
}

/**
 * Starts one CA, one etcd and the named clusters on it. Clusters start one after another:
 * start-up is CPU-bound and two cores gain nothing from starting them together.
 */
export async function startEnvironment(opts: EnvironmentOptions): Promise<Environment> {
  const dir = opts.dir ?? path.join(os.tmpdir(), `flotilla-env-${process.pid}-${Date.now().toString(36)}`);
  mkdirSync(dir, { recursive: true });
  const clusters: Cluster[] = [];
  let etcd: Etcd | undefined;
  const stop = async (): Promise<void> => {
    for (const c of [...clusters].reverse()) await c.stop();
    if (etcd) await etcd.stop();
    if (!opts.keep) rmSync(dir, { recursive: true, force: true });
  };
  try {
    const pki = await createPki(path.join(dir, 'pki'));
    // tmpfs keeps etcd's writes off the disk; each run gets its own data dir.
    const shm = '/dev/shm';
    const dataDir = path.join(existsDir(shm) ? shm : dir, `flotilla-etcd-${process.pid}-${Date.now().toString(36)}`);
    etcd = await startEtcd({ dataDir, logDir: dir });
    const startSeconds: number[] = [];
    for (const c of opts.clusters) {
      const t0 = performance.now();
      clusters.push(await startCluster({ ...c, shared: { pki, etcd, dir } }));
      startSeconds.push((performance.now() - t0) / 1000);
    }
    const etcdData = dataDir;
    return {
      dir,
      pki,
      etcd,
      clusters,
      startSeconds,
      stop: async () => {
        await stop();
        rmSync(etcdData, { recursive: true, force: true });
      },
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

function existsDir(p: string): boolean {
  try {
    mkdirSync(p, { recursive: true });
    return true;
  } catch {
    return false;
  }
}
