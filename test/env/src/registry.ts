/**
 * A local OCI registry (Debian's `docker-registry`, distribution 2.8) on a free loopback port,
 * optionally behind htpasswd basic auth, and a builder that pushes tiny images to it over the
 * registry HTTP API — no Docker, no skopeo: a gzipped tar layer, a config blob, an OCI manifest.
 *
 *   const reg = await startRegistry({ dir, auth: { username: 'u', password: 'p' } });
 *   const img = await pushTinyImage(reg, { repository: 'demo/tiny', tag: 'v1', files: { 'hello.txt': 'v1' } });
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { HarnessError } from './errors.js';
import { run } from './exec.js';
import { freePort } from './ports.js';
import { startProcess, waitFor, type ManagedProcess } from './process.js';

export interface RegistryAuth {
  username: string;
  password: string;
}

export interface RegistryOptions {
  /** State directory: config, htpasswd, blobs, log. */
  dir: string;
  /** Names the process in logs and errors; default `registry`. */
  name?: string;
  /** Require basic auth with this user (htpasswd, bcrypt). */
  auth?: RegistryAuth;
}

export interface Registry {
  /** `127.0.0.1:<port>`: the prefix of image references. */
  host: string;
  /** `http://127.0.0.1:<port>`. */
  url: string;
  auth: RegistryAuth | undefined;
  process: ManagedProcess;
  stop(): Promise<void>;
}

const COMMAND = '/usr/bin/docker-registry';

/**
 * Starts `docker-registry serve` with its own config. Debian's default config points htpasswd at
 * a directory and listens on :5000, so the harness always writes its own.
 */
export async function startRegistry(opts: RegistryOptions): Promise<Registry> {
  const name = opts.name ?? 'registry';
  mkdirSync(path.join(opts.dir, 'data'), { recursive: true });
  const port = await freePort();
  const host = `127.0.0.1:${port}`;
  const lines = [
    'version: 0.1',
    'log: {level: info}',
    `storage: {filesystem: {rootdirectory: ${JSON.stringify(path.join(opts.dir, 'data'))}}, delete: {enabled: true}}`,
    `http: {addr: ${JSON.stringify(host)}}`,
  ];
  if (opts.auth) {
    const file = path.join(opts.dir, 'htpasswd');
    writeFileSync(file, `${opts.auth.username}:${await bcrypt(opts.auth.password)}\n`, { mode: 0o600 });
    lines.push(`auth: {htpasswd: {realm: flotilla-test, path: ${JSON.stringify(file)}}}`);
  }
  const configFile = path.join(opts.dir, 'config.yml');
  writeFileSync(configFile, lines.join('\n') + '\n');
  const proc = startProcess({
    name,
    command: COMMAND,
    args: ['serve', configFile],
    logFile: path.join(opts.dir, 'registry.log'),
  });
  const url = `http://${host}`;
  // /v2/ answers 200, or 401 behind auth: either way the registry is serving.
  await waitFor(name, async () => [200, 401].includes((await fetch(`${url}/v2/`)).status), {
    timeoutMs: 30_000,
    process: proc,
  });
  return { host, url, auth: opts.auth, process: proc, stop: () => proc.stop() };
}

/**
 * distribution only accepts bcrypt in htpasswd files and Node has no bcrypt; perl (Essential on
 * Debian) calls libxcrypt's crypt(3), which implements it.
 */
async function bcrypt(password: string): Promise<string> {
  const alphabet = './ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
  const salt = [...randomBytes(22)].map((b) => alphabet[b % 64]).join('');
  // Cost 4, the minimum: the registry checks the hash on every request, and tests make many.
  const hash = await run('registry', 'perl', ['-e', 'print crypt($ARGV[0], $ARGV[1])', password, `$2y$04$${salt}`]);
  if (!hash.startsWith('$2y$04$')) throw new HarnessError('COMMAND_FAILED', 'registry', 'crypt(3) has no bcrypt');
  return hash;
}

export interface TinyImageOptions {
  /** Repository inside the registry, e.g. `demo/tiny`. */
  repository: string;
  tag: string;
  /** Files of the single layer, by path relative to the root. Different content → different digests. */
  files?: Record<string, string>;
}

export interface PushedImage {
  /** `<host>/<repository>:<tag>`. */
  ref: string;
  /** Digest of the manifest (`sha256:…`), what the registry returns as Docker-Content-Digest. */
  digest: string;
  /** Digest of the config blob: containerd reports it as the image id. */
  configDigest: string;
}

const MEDIA = {
  manifest: 'application/vnd.oci.image.manifest.v1+json',
  config: 'application/vnd.oci.image.config.v1+json',
  layer: 'application/vnd.oci.image.layer.v1.tar+gzip',
} as const;

/** Builds a one-layer image from `files` and pushes it; pushing the same tag again moves it. */
export async function pushTinyImage(reg: Registry, opts: TinyImageOptions): Promise<PushedImage> {
  const tar = makeTar(opts.files ?? { 'hello.txt': `${opts.repository}:${opts.tag}\n` });
  const layer = gzipSync(tar);
  const config = Buffer.from(
    JSON.stringify({
      architecture: goArch(),
      os: 'linux',
      config: { Cmd: ['/hello.txt'] },
      rootfs: { type: 'layers', diff_ids: [sha256(tar)] },
    }),
  );
  await pushBlob(reg, opts.repository, layer);
  await pushBlob(reg, opts.repository, config);
  const manifest = JSON.stringify({
    schemaVersion: 2,
    mediaType: MEDIA.manifest,
    config: { mediaType: MEDIA.config, digest: sha256(config), size: config.length },
    layers: [{ mediaType: MEDIA.layer, digest: sha256(layer), size: layer.length }],
  });
  const res = await fetch(`${reg.url}/v2/${opts.repository}/manifests/${opts.tag}`, {
    method: 'PUT',
    headers: { 'Content-Type': MEDIA.manifest, ...authHeader(reg) },
    body: manifest,
  });
  await expectStatus(res, 201, `PUT manifest ${opts.repository}:${opts.tag}`);
  return {
    ref: `${reg.host}/${opts.repository}:${opts.tag}`,
    digest: res.headers.get('Docker-Content-Digest') ?? sha256(Buffer.from(manifest)),
    configDigest: sha256(config),
  };
}

async function pushBlob(reg: Registry, repository: string, blob: Buffer): Promise<void> {
  const digest = sha256(blob);
  const start = await fetch(`${reg.url}/v2/${repository}/blobs/uploads/`, { method: 'POST', headers: authHeader(reg) });
  await expectStatus(start, 202, `start upload to ${repository}`);
  const location = new URL(start.headers.get('Location') ?? '', reg.url);
  location.searchParams.set('digest', digest);
  const put = await fetch(location, {
    method: 'PUT',
    headers: { 'Content-Type': 'application/octet-stream', ...authHeader(reg) },
    body: blob,
  });
  await expectStatus(put, 201, `upload blob ${digest} to ${repository}`);
}

function authHeader(reg: Registry): Record<string, string> {
  if (!reg.auth) return {};
  const token = Buffer.from(`${reg.auth.username}:${reg.auth.password}`).toString('base64');
  return { Authorization: `Basic ${token}` };
}

async function expectStatus(res: Response, status: number, what: string): Promise<void> {
  if (res.status === status) return;
  const body = await res.text().catch(() => '');
  throw new HarnessError('COMMAND_FAILED', 'registry', `${what}: HTTP ${res.status} ${body.slice(0, 300)}`);
}

function sha256(data: Buffer): string {
  return `sha256:${createHash('sha256').update(data).digest('hex')}`;
}

/** The Go architecture name of this machine, so containerd's platform matcher accepts the image. */
function goArch(): string {
  return ({ x64: 'amd64', arm64: 'arm64', arm: 'arm', s390x: 's390x', ppc64: 'ppc64le' } as const)[
    process.arch as 'x64'
  ];
}

/** A minimal ustar archive of regular files (mode 0644, mtime 0, so equal files give equal digests). */
function makeTar(files: Record<string, string>): Buffer {
  const blocks: Buffer[] = [];
  for (const [name, content] of Object.entries(files).sort(([a], [b]) => a.localeCompare(b))) {
    const body = Buffer.from(content);
    const header = Buffer.alloc(512);
    header.write(name, 0, 100, 'utf8');
    header.write('0000644\0', 100);
    header.write('0000000\0', 108);
    header.write('0000000\0', 116);
    header.write(`${body.length.toString(8).padStart(11, '0')}\0`, 124);
    header.write('00000000000\0', 136);
    header.write('        ', 148); // checksum field counts as spaces while summing
    header.write('0', 156);
    header.write('ustar\0' + '00', 257);
    let sum = 0;
    for (const byte of header) sum += byte;
    header.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148);
    blocks.push(header, body, Buffer.alloc((512 - (body.length % 512)) % 512));
  }
  blocks.push(Buffer.alloc(1024));
  return Buffer.concat(blocks);
}
