/**
 * The CRI ImageService over gRPC on the runtime's unix socket, with the runtime.v1 api.proto
 * vendored in agent/proto (loaded at runtime by @grpc/proto-loader, no code generation). Errors
 * keep the gRPC status, and their message reads like the kubelet's, e.g.
 * `NotFound: failed to pull and unpack image "…": … not found`.
 */
import { fileURLToPath } from 'node:url';
import grpc from '@grpc/grpc-js';
import protoLoader from '@grpc/proto-loader';
import { AgentError, CriError } from '../../errors.js';
import type { AuthConfig, CallOptions, ImageInfo, ImageService, SandboxConfig } from './image-service.js';

/** The vendored proto: agent/proto/runtime/v1/api.proto, from src/ and from dist/ alike. */
export const CRI_PROTO_PATH = fileURLToPath(new URL('../../../proto/runtime/v1/api.proto', import.meta.url));

/** OpenKruise raises the receive limit so ListImages works on nodes with many images. */
const MAX_MESSAGE_BYTES = 16 * 1024 * 1024;
/** Default per-call deadline when the caller gives none. */
const DEFAULT_TIMEOUT_MS = 2 * 60_000;

interface WireImage {
  id?: string;
  repoTags?: string[];
  repoDigests?: string[];
  size?: string | number;
}

type Callback<Res> = (err: grpc.ServiceError | null, res?: Res) => void;
type Unary<Req, Res> = (
  req: Req,
  metadata: grpc.Metadata,
  options: grpc.CallOptions,
  callback: Callback<Res>,
) => grpc.ClientUnaryCall;

interface ImageServiceClient extends grpc.Client {
  pullImage: Unary<
    { image: { image: string }; auth?: AuthConfig; sandboxConfig?: SandboxConfig },
    { imageRef?: string }
  >;
  imageStatus: Unary<{ image: { image: string }; verbose: boolean }, { image?: WireImage | null }>;
  listImages: Unary<{ filter?: unknown }, { images?: WireImage[] }>;
}

type ClientConstructor = new (
  address: string,
  credentials: grpc.ChannelCredentials,
  options?: grpc.ClientOptions,
) => ImageServiceClient;

export interface GrpcImageServiceOptions {
  /** Path of the runtime's unix socket, e.g. /run/containerd/containerd.sock. */
  socketPath: string;
  /** Override of the vendored proto (tests). */
  protoPath?: string;
}

/** Connects lazily: the first call dials the socket (gRPC reconnects by itself afterwards). */
export function createGrpcImageService(options: GrpcImageServiceOptions): ImageService {
  const Client = loadImageServiceClient(options.protoPath ?? CRI_PROTO_PATH);
  const client = new Client(`unix://${options.socketPath}`, grpc.credentials.createInsecure(), {
    'grpc.max_receive_message_length': MAX_MESSAGE_BYTES,
  });
  const call = <Req, Res>(method: 'pullImage' | 'imageStatus' | 'listImages', req: Req, opts: CallOptions = {}) =>
    unary<Req, Res>(client, method, req, opts);
  return {
    async pullImage(req, opts) {
      const res = await call<Parameters<ImageServiceClient['pullImage']>[0], { imageRef?: string }>(
        'pullImage',
        { image: { image: req.image }, auth: req.auth, sandboxConfig: req.sandboxConfig },
        opts,
      );
      return { imageRef: res.imageRef ?? '' };
    },
    async imageStatus(image, opts) {
      const res = await call<unknown, { image?: WireImage | null }>(
        'imageStatus',
        { image: { image }, verbose: false },
        opts,
      );
      return res.image?.id ? toImageInfo(res.image) : undefined;
    },
    async listImages(opts) {
      const res = await call<unknown, { images?: WireImage[] }>('listImages', {}, opts);
      return (res.images ?? []).map(toImageInfo);
    },
    close: () => client.close(),
  };
}

function loadImageServiceClient(protoPath: string): ClientConstructor {
  try {
    const definition = protoLoader.loadSync(protoPath, {
      keepCase: false,
      longs: String,
      enums: String,
      defaults: true,
      oneofs: true,
    });
    const pkg = grpc.loadPackageDefinition(definition) as unknown as {
      runtime: { v1: { ImageService: ClientConstructor } };
    };
    return pkg.runtime.v1.ImageService;
  } catch (err) {
    throw new AgentError('DAEMON_ERR_CRI_PROTO', `cannot load CRI proto ${protoPath}`, { cause: err });
  }
}

function unary<Req, Res>(
  client: ImageServiceClient,
  method: 'pullImage' | 'imageStatus' | 'listImages',
  req: Req,
  opts: CallOptions,
): Promise<Res> {
  if (opts.signal?.aborted) return Promise.reject(abortedError(method));
  const deadline = Date.now() + (opts.timeoutMs ?? DEFAULT_TIMEOUT_MS);
  return new Promise<Res>((resolve, reject) => {
    const fn = client[method] as unknown as Unary<Req, Res>;
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

function toImageInfo(img: WireImage): ImageInfo {
  return {
    id: img.id ?? '',
    repoTags: img.repoTags ?? [],
    repoDigests: img.repoDigests ?? [],
    size: Number(img.size ?? 0),
  };
}
