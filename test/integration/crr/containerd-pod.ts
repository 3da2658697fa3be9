/**
 * Real containers in a real containerd for the CRR suite, created the way the kubelet creates
 * them: a pod sandbox (host network, so no CNI is needed) and containers labelled with the pod's
 * uid and the container's name. The image is an OCI archive built here around a static
 * `pause`-like binary (compiled with gcc -static) and imported with `ctr`, also under the name
 * containerd's CRI plugin uses for sandboxes, so nothing is pulled.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type grpc from '@grpc/grpc-js';
import type { Containerd } from '@flotilla/test';
import { criClient, unary } from '../../../agent/src/daemon/cri/grpc.js';
import { KUBELET_LABEL_CONTAINER_NAME, KUBELET_LABEL_POD_UID } from '../../../agent/src/daemon/cri/runtime-service.js';

/** The image every container runs; also tagged as containerd's sandbox image. */
export const TEST_IMAGE = 'flotilla.test/pause:1';
const SANDBOX_IMAGE = '127.0.0.1:1/pause:3.9';

const SOURCE = `#include <signal.h>
#include <unistd.h>
static void bye(int s) { (void)s; _exit(0); }
int main(void) { signal(SIGTERM, bye); signal(SIGINT, bye); for (;;) pause(); }
`;

const sha = (b: Buffer): string => `sha256:${createHash('sha256').update(b).digest('hex')}`;

/** An OCI image archive with /pause as its entrypoint. */
function buildImageArchive(dir: string): string {
  mkdirSync(path.join(dir, 'rootfs'), { recursive: true });
  writeFileSync(path.join(dir, 'pause.c'), SOURCE);
  execFileSync('gcc', ['-static', '-Os', '-o', path.join(dir, 'rootfs', 'pause'), path.join(dir, 'pause.c')]);
  execFileSync('tar', [
    '-C',
    path.join(dir, 'rootfs'),
    '--owner=0',
    '--group=0',
    '-cf',
    path.join(dir, 'layer.tar'),
    'pause',
  ]);
  const layer = execFileSync('cat', [path.join(dir, 'layer.tar')]);
  const config = Buffer.from(
    JSON.stringify({
      architecture: process.arch === 'arm64' ? 'arm64' : 'amd64',
      os: 'linux',
      config: { Entrypoint: ['/pause'] },
      rootfs: { type: 'layers', diff_ids: [sha(layer)] },
    }),
  );
  const manifest = Buffer.from(
    JSON.stringify({
      schemaVersion: 2,
      mediaType: 'application/vnd.oci.image.manifest.v1+json',
      config: { mediaType: 'application/vnd.oci.image.config.v1+json', digest: sha(config), size: config.length },
      layers: [{ mediaType: 'application/vnd.oci.image.layer.v1.tar', digest: sha(layer), size: layer.length }],
    }),
  );
  const oci = path.join(dir, 'oci');
  mkdirSync(path.join(oci, 'blobs', 'sha256'), { recursive: true });
  for (const blob of [layer, config, manifest]) {
    writeFileSync(path.join(oci, 'blobs', 'sha256', sha(blob).slice(7)), blob);
  }
  writeFileSync(path.join(oci, 'oci-layout'), JSON.stringify({ imageLayoutVersion: '1.0.0' }));
  writeFileSync(
    path.join(oci, 'index.json'),
    JSON.stringify({
      schemaVersion: 2,
      manifests: [
        {
          mediaType: 'application/vnd.oci.image.manifest.v1+json',
          digest: sha(manifest),
          size: manifest.length,
          annotations: { 'org.opencontainers.image.ref.name': '1' },
        },
      ],
    }),
  );
  const archive = path.join(dir, 'image.tar');
  execFileSync('tar', ['-C', oci, '-cf', archive, '.']);
  return archive;
}

/** Imports the test image into containerd's CRI namespace, under TEST_IMAGE and the sandbox name. */
export function importTestImage(ctrd: Containerd): void {
  const dir = mkdtempSync(path.join(tmpdir(), 'crr-img-'));
  try {
    const archive = buildImageArchive(dir);
    const ctr = (...args: string[]): void => {
      execFileSync('/usr/bin/ctr', ['--address', ctrd.socket, '--namespace', 'k8s.io', ...args], { stdio: 'pipe' });
    };
    ctr('images', 'import', '--index-name', TEST_IMAGE, '--all-platforms', archive);
    ctr('images', 'tag', '--force', TEST_IMAGE, SANDBOX_IMAGE);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export interface RealPod {
  sandboxId: string;
  /** Container ids by name. */
  containers: Record<string, string>;
}

/** The kubelet's part: a sandbox for the pod and one running container per name. */
export class KubeletStandIn {
  readonly #client: grpc.Client;

  constructor(socket: string) {
    this.#client = criClient<grpc.Client>('RuntimeService', socket);
  }

  #call<Res>(method: string, req: unknown): Promise<Res> {
    return unary<unknown, Res>(this.#client, method, req, { timeoutMs: 60_000 });
  }

  #sandboxConfig(pod: { name: string; namespace: string; uid: string }): unknown {
    return {
      metadata: { name: pod.name, namespace: pod.namespace, uid: pod.uid, attempt: 0 },
      labels: { [KUBELET_LABEL_POD_UID]: pod.uid },
      // NODE (2): host network, so the sandbox needs no CNI plugin.
      linux: { securityContext: { namespaceOptions: { network: 'NODE', pid: 'CONTAINER', ipc: 'POD' } } },
    };
  }

  async runPod(pod: { name: string; namespace: string; uid: string }, names: string[]): Promise<RealPod> {
    const config = this.#sandboxConfig(pod);
    const { podSandboxId } = await this.#call<{ podSandboxId: string }>('runPodSandbox', { config });
    const containers: Record<string, string> = {};
    for (const name of names) containers[name] = await this.startContainer(podSandboxId, pod, name, 0);
    return { sandboxId: podSandboxId, containers };
  }

  /** Creates and starts a container (attempt > 0: the kubelet restarting it). */
  async startContainer(
    sandboxId: string,
    pod: { name: string; namespace: string; uid: string },
    name: string,
    attempt: number,
  ): Promise<string> {
    const { containerId } = await this.#call<{ containerId: string }>('createContainer', {
      podSandboxId: sandboxId,
      config: {
        metadata: { name, attempt },
        image: { image: TEST_IMAGE },
        labels: { [KUBELET_LABEL_POD_UID]: pod.uid, [KUBELET_LABEL_CONTAINER_NAME]: name },
      },
      sandboxConfig: this.#sandboxConfig(pod),
    });
    await this.#call('startContainer', { containerId });
    return containerId;
  }

  async state(containerId: string): Promise<string> {
    const res = await this.#call<{ status?: { state?: string } }>('containerStatus', { containerId });
    return res.status?.state ?? 'CONTAINER_UNKNOWN';
  }

  async removePod(sandboxId: string): Promise<void> {
    await this.#call('stopPodSandbox', { podSandboxId: sandboxId }).catch(() => undefined);
    await this.#call('removePodSandbox', { podSandboxId: sandboxId }).catch(() => undefined);
  }

  close(): void {
    this.#client.close();
  }
}
