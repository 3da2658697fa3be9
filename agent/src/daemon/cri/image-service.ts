/**
 * The slice of the CRI ImageService (runtime.v1) the node daemon uses, in plain TypeScript.
 * Implemented over gRPC for real runtimes (grpc-image-service.ts) and in memory for unit tests
 * (fake-image-service.ts), as OpenKruise's imageruntime.ImageService is.
 */

/** runtime.v1.AuthConfig: credentials for one registry. */
export interface AuthConfig {
  username?: string;
  password?: string;
  /** base64 of `username:password`, as docker config files store it. */
  auth?: string;
  serverAddress?: string;
  identityToken?: string;
  registryToken?: string;
}

/** Labels and annotations of the (pretend) pod sandbox a pull is made for. */
export interface SandboxConfig {
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

export interface PullImageRequest {
  /** A full reference: `registry/repo:tag` or `repo@sha256:…`. */
  image: string;
  auth?: AuthConfig;
  sandboxConfig?: SandboxConfig;
}

/** runtime.v1.Image, the fields the daemon reads. */
export interface ImageInfo {
  /** Image id, e.g. `sha256:<config digest>` on containerd. */
  id: string;
  repoTags: string[];
  repoDigests: string[];
  size: number;
}

export interface CallOptions {
  /** Cancels the call (the worker was stopped). */
  signal?: AbortSignal;
  /** Fails the call with DAEMON_ERR_CRI_TIMEOUT after this long. */
  timeoutMs?: number;
}

export interface ImageService {
  /** Pulls an image; resolves the runtime's image ref (its id). Rejects with a CriError. */
  pullImage(req: PullImageRequest, options?: CallOptions): Promise<{ imageRef: string }>;
  /** The image if present on the node, else undefined (absence is not an error in CRI). */
  imageStatus(image: string, options?: CallOptions): Promise<ImageInfo | undefined>;
  /** Every image on the node. */
  listImages(options?: CallOptions): Promise<ImageInfo[]>;
  /** Releases the connection. */
  close(): void;
}
