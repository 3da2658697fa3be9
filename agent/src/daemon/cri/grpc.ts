/**
 * What the CRI clients share: the vendored runtime.v1 api.proto (agent/proto, loaded at runtime by
 * @grpc/proto-loader, no code generation), a client of one of its services on the runtime's unix
 * socket, and unary calls with a deadline, cancellation and errors that keep the gRPC status and
 * read like the kubelet's (`NotFound: …`).
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import grpc from '@grpc/grpc-js';
import protoLoader from '@grpc/proto-loader';
import { AgentError, CriError } from '../../errors.js';
import type { CallOptions } from './image-service.js';

/**
 * The vendored proto, agent/proto/runtime/v1/api.proto: the first one above this module, which
 * finds it from src/daemon/cri, dist/daemon/cri and the bundle in dist/bundle alike.
 */
export const CRI_PROTO_PATH = findAbove(path.dirname(fileURLToPath(import.meta.url)), 'proto/runtime/v1/api.proto');

function findAbove(dir: string, relative: string): string {
  for (let d = dir; ; d = path.dirname(d)) {
    const candidate = path.join(d, relative);
    if (existsSync(candidate)) return candidate;
    // Not found: the loader's error names the path it was looked for at.
    if (path.dirname(d) === d) return path.join(dir, relative);
  }
}

/** OpenKruise raises the receive limit so ListImages works on nodes with many images. */
const MAX_MESSAGE_BYTES = 16 * 1024 * 1024;
/** Default per-call deadline when the caller gives none. */
const DEFAULT_TIMEOUT_MS = 2 * 60_000;

type Callback<Res> = (err: grpc.ServiceError | null, res?: Res) => void;
export type Unary<Req, Res> = (
  req: Req,
  metadata: grpc.Metadata,
  options: grpc.CallOptions,
  callback: Callback<Res>,
) => grpc.ClientUnaryCall;

type ClientConstructor<C> = new (
  address: string,
  credentials: grpc.ChannelCredentials,
  options?: grpc.ClientOptions,
) => C;

/** A client of `runtime.v1.<service>`; it connects lazily (the first call dials, gRPC reconnects). */
export function criClient<C extends grpc.Client>(
  service: 'ImageService' | 'RuntimeService',
  socketPath: string,
  protoPath: string = CRI_PROTO_PATH,
): C {
  let Client: ClientConstructor<C>;
  try {
    const definition = protoLoader.loadSync(protoPath, {
      keepCase: false,
      longs: String,
      enums: String,
      defaults: true,
      oneofs: true,
    });
    const pkg = grpc.loadPackageDefinition(definition) as unknown as {
      runtime: { v1: Record<string, ClientConstructor<C>> };
    };
    Client = pkg.runtime.v1[service]!;
  } catch (err) {
    throw new AgentError('DAEMON_ERR_CRI_PROTO', `cannot load CRI proto ${protoPath}`, { cause: err });
  }
  return new Client(`unix://${socketPath}`, grpc.credentials.createInsecure(), {
    'grpc.max_receive_message_length': MAX_MESSAGE_BYTES,
  });
}

/** Calls `method` of the client; rejects with a CriError. */
export function unary<Req, Res>(client: grpc.Client, method: string, req: Req, opts: CallOptions): Promise<Res> {
  if (opts.signal?.aborted) return Promise.reject(abortedError(method));
  const deadline = Date.now() + (opts.timeoutMs ?? DEFAULT_TIMEOUT_MS);
  return new Promise<Res>((resolve, reject) => {
    const fn = (client as unknown as Record<string, Unary<Req, Res>>)[method]!;
    const onAbort = (): void => running.cancel();
    const running = fn.call(client, req, new grpc.Metadata(), { deadline }, (err, res) => {
      opts.signal?.removeEventListener('abort', onAbort);
      if (err) reject(toCriError(method, err, opts.signal?.aborted ?? false));
      else resolve(res as Res);
    });
    opts.signal?.addEventListener('abort', onAbort, { once: true });
  });
}

function toCriError(method: string, err: grpc.ServiceError, aborted: boolean): CriError {
  if (aborted || err.code === grpc.status.CANCELLED) return abortedError(method, err);
  const name = grpc.status[err.code] ?? String(err.code);
  const text = `${toPascal(name)}: ${err.details || err.message}`;
  const code = err.code === grpc.status.DEADLINE_EXCEEDED ? 'DAEMON_ERR_CRI_TIMEOUT' : 'DAEMON_ERR_CRI_CALL';
  return new CriError(code, text, err.code, { cause: err });
}

function abortedError(method: string, cause?: unknown): CriError {
  return new CriError('DAEMON_ERR_CRI_ABORTED', `${method} was cancelled`, grpc.status.CANCELLED, { cause });
}

/** NOT_FOUND → NotFound, as Go's gRPC prints codes. */
function toPascal(name: string): string {
  return name
    .toLowerCase()
    .split('_')
    .map((w) => w.charAt(0).toUpperCase() + w.slice(1))
    .join('');
}
