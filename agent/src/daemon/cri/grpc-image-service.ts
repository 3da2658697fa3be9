/**
 * The CRI ImageService over gRPC on the runtime's unix socket, with the runtime.v1 api.proto
 * vendored in agent/proto (loaded at runtime by @grpc/proto-loader, no code generation). Errors
 * keep the gRPC status, and their message reads like the kubelet's, e.g.
 * `NotFound: failed to pull and unpack image "…": … not found`.
 */
import type grpc from '@grpc/grpc-js';
import { CRI_PROTO_PATH, criClient, unary, type Unary } from './grpc.js';
import type { AuthConfig, CallOptions, ImageInfo, ImageService, SandboxConfig } from './image-service.js';

export { CRI_PROTO_PATH } from './grpc.js';

interface WireImage {
  id?: string;
  repoTags?: string[];
  repoDigests?: string[];
  size?: string | number;
}

interface ImageServiceClient extends grpc.Client {
  pullImage: Unary<
    { image: { image: string }; auth?: AuthConfig; sandboxConfig?: SandboxConfig },
    { imageRef?: string }
  >;
  imageStatus: Unary<{ image: { image: string }; verbose: boolean }, { image?: WireImage | null }>;
  listImages: Unary<{ filter?: unknown }, { images?: WireImage[] }>;
}

export interface GrpcImageServiceOptions {
  /** Path of the runtime's unix socket, e.g. /run/containerd/containerd.sock. */
  socketPath: string;
  /** Override of the vendored proto (tests). */
  protoPath?: string;
}

/** Connects lazily: the first call dials the socket (gRPC reconnects by itself afterwards). */
export function createGrpcImageService(options: GrpcImageServiceOptions): ImageService {
  const client = criClient<ImageServiceClient>('ImageService', options.socketPath, options.protoPath ?? CRI_PROTO_PATH);
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

function toImageInfo(img: WireImage): ImageInfo {
  return {
    id: img.id ?? '',
    repoTags: img.repoTags ?? [],
    repoDigests: img.repoDigests ?? [],
    size: Number(img.size ?? 0),
  };
}
