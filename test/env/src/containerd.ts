/**
 * A containerd (Debian's 1.6 package, CRI plugin on) per fake node: its own root, state, gRPC and
 * ttrpc sockets, and a registry hosts directory that reaches the test registries over plain HTTP.
 * Several run side by side, so each node's image store is real and separate. Needs root.
 *
 *   const ctrd = await startContainerd({ name: 'node-a', registries: [reg.host] });
 *   // CRI endpoint: ctrd.socket  (unix socket path, < 107 bytes)
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { HarnessError } from './errors.js';
import { run } from './exec.js';
import { startProcess, waitFor, type ManagedProcess } from './process.js';

export interface ContainerdOptions {
  /** Names the process in logs; e.g. the node it stands for. */
  name: string;
  /**
   * Where root, state and sockets go. Unix socket paths are limited to 107 bytes, so the default
   * is a fresh short directory under the system temp dir rather than the (long) test env dir.
   */
  dir?: string;
  /** Where the log goes; default `<dir>/containerd.log`. */
  logFile?: string;
  /** `host:port` registries containerd should reach over plain HTTP. */
  registries?: string[];
}

export interface Containerd {
  name: string;
  dir: string;
  /** Path of the gRPC socket (CRI and containerd API). */
  socket: string;
  process: ManagedProcess;
  /** Image references in the CRI namespace `k8s.io`, as `ctr images ls -q` lists them. */
  listImages(): Promise<string[]>;
  /** Removes an image from the node (as a kubelet image GC would). */
  removeImage(ref: string): Promise<void>;
  stop(): Promise<void>;
}

const COMMAND = '/usr/bin/containerd';
const CTR = '/usr/bin/ctr';
const MAX_SOCKET_PATH = 107;

/** Starts containerd and waits until its API answers. */
export async function startContainerd(opts: ContainerdOptions): Promise<Containerd> {
  if (!existsSync(COMMAND)) {
    throw new HarnessError('TOOL_MISSING', opts.name, `${COMMAND} not found; run scripts/setup.sh (apt containerd)`);
  }
  // A directory the harness made up is removed on stop(); a given one is left for inspection.
  const dir = opts.dir ?? mkdtempSync(path.join(tmpdir(), 'ctrd-'));
  const ownDir = opts.dir === undefined;
  const socket = path.join(dir, 'containerd.sock');
  if (Buffer.byteLength(`${socket}.ttrpc`) > MAX_SOCKET_PATH) {
    throw new HarnessError('START_FAILED', opts.name, `socket path ${socket}.ttrpc is longer than ${MAX_SOCKET_PATH}`);
  }
  const hostsDir = path.join(dir, 'certs.d');
  mkdirSync(path.join(dir, 'cni'), { recursive: true });
  for (const host of opts.registries ?? []) writeHostsToml(hostsDir, host);
  const configFile = path.join(dir, 'config.toml');
  writeFileSync(configFile, renderConfig(dir, socket, hostsDir));
  const proc = startProcess({
    name: opts.name,
    command: COMMAND,
    args: ['--config', configFile],
    logFile: opts.logFile ?? path.join(dir, 'containerd.log'),
  });
  const ctr = (args: string[]): Promise<string> =>
    run(opts.name, CTR, ['--address', socket, '--namespace', 'k8s.io', ...args], { timeoutMs: 30_000 });
  await waitFor(opts.name, async () => existsSync(socket) && (await ctr(['version'])).includes('Server'), {
    timeoutMs: 30_000,
    process: proc,
    what: 'containerd API not answering',
  });
  return {
    name: opts.name,
    dir,
    socket,
    process: proc,
    async listImages() {
      return (await ctr(['images', 'ls', '-q'])).split('\n').filter(Boolean);
    },
    async removeImage(ref) {
      await ctr(['images', 'rm', ref]);
    },
    async stop() {
      await proc.stop();
      if (ownDir) rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** containerd only reads plain-HTTP registries from a hosts.toml per `host:port`. */
function writeHostsToml(hostsDir: string, host: string): void {
  const dir = path.join(hostsDir, host);
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    path.join(dir, 'hosts.toml'),
    [`server = "http://${host}"`, `[host."http://${host}"]`, '  capabilities = ["pull", "resolve"]', ''].join('\n'),
  );
}

/**
 * The native snapshotter works on any filesystem (overlay needs kernel support inside the test
 * machine); the unused snapshotters are disabled so their probes don't slow start-up or fail.
 */
function renderConfig(dir: string, socket: string, hostsDir: string): string {
  const q = (s: string): string => JSON.stringify(s);
  return [
    'version = 2',
    `root = ${q(path.join(dir, 'root'))}`,
    `state = ${q(path.join(dir, 'state'))}`,
    'disabled_plugins = ["io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs",',
    '  "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper"]',
    '[grpc]',
    `  address = ${q(socket)}`,
    '[ttrpc]',
    `  address = ${q(`${socket}.ttrpc`)}`,
    '[plugins."io.containerd.grpc.v1.cri"]',
    '  sandbox_image = "127.0.0.1:1/pause:3.9"',
    // Sandboxes ask for oom_score_adj -998, which this machine refuses (runc then fails with
    // "can't get final child's PID"); clamp to containerd's own, as rootless setups do.
    '  restrict_oom_score_adj = true',
    '  [plugins."io.containerd.grpc.v1.cri".containerd]',
    '    snapshotter = "native"',
    '  [plugins."io.containerd.grpc.v1.cri".cni]',
    '    bin_dir = "/usr/lib/cni"',
    `    conf_dir = ${q(path.join(dir, 'cni'))}`,
    '  [plugins."io.containerd.grpc.v1.cri".registry]',
    `    config_path = ${q(hostsDir)}`,
    '',
  ].join('\n');
}
