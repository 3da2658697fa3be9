/**
 * The node daemon (`agent daemon --node NAME`): pulls the images its NodeImage lists through the
 * CRI ImageService and reports phase, progress, image id and messages in the NodeImage status.
 */
export { daemonCommand } from './cli.js';
export { loadDaemonConfig, type DaemonConfig } from './config.js';
export { createDaemon, type Daemon, type DaemonDeps } from './run.js';
export { createGrpcImageService, CRI_PROTO_PATH } from './cri/grpc-image-service.js';
export { FakeImageService } from './cri/fake-image-service.js';
export type { AuthConfig, CallOptions, ImageInfo, ImageService, PullImageRequest } from './cri/image-service.js';
export { resolveRuntimeSocket } from './cri/socket.js';
