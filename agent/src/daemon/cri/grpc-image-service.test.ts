/**
 * The gRPC client against an in-process gRPC server that speaks the vendored runtime.v1 proto on
 * a unix socket: request and response mapping, error codes and messages, timeouts, cancellation.
 * The real containerd is exercised by test/integration/imagepull.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import grpc from '@grpc/grpc-js';
import protoLoader from '@grpc/proto-loader';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CriError } from '../../errors.js';
import { createGrpcImageService, CRI_PROTO_PATH } from './grpc-image-service.js';
import type { ImageService } from './image-service.js';

type Handler = grpc.handleUnaryCall<Record<string, unknown>, Record<string, unknown>>;

const received: Record<string, unknown>[] = [];
let server: grpc.Server;
let dir: string;
let images: ImageService;

const handlers: Record<'pullImage' | 'imageStatus' | 'listImages', Handler> = {
  pullImage(call, callback) {
    received.push(call.request);
    const image = (call.request.image as { image: string }).image;
    if (image.includes('missing')) {
      callback({ code: grpc.status.NOT_FOUND, details: `failed to resolve reference "${image}": not found` });
    } else if (image.includes('slow')) {
      setTimeout(() => callback(null, { imageRef: 'sha256:slow' }), 500);
    } else {
      callback(null, { imageRef: 'sha256:abc' });
    }
  },
  imageStatus(call, callback) {
    const image = (call.request.image as { image: string }).image;
    callback(null, image.includes('absent') ? {} : { image: { id: 'sha256:abc', repoTags: [image], size: '896' } });
  },
  listImages(_call, callback) {
    callback(null, { images: [{ id: 'sha256:abc', repoTags: ['r/a:1'], repoDigests: ['r/a@sha256:d'], size: '12' }] });
  },
};

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'cri-'));
  const def = protoLoader.loadSync(CRI_PROTO_PATH, { keepCase: false, longs: String, enums: String, defaults: true });
  const pkg = grpc.loadPackageDefinition(def) as unknown as {
    runtime: { v1: { ImageService: { service: grpc.ServiceDefinition } } };
  };
  server = new grpc.Server();
  server.addService(pkg.runtime.v1.ImageService.service, handlers);
  const socket = path.join(dir, 'cri.sock');
  await new Promise<void>((resolve, reject) =>
    server.bindAsync(`unix://${socket}`, grpc.ServerCredentials.createInsecure(), (err) =>
      err ? reject(err) : resolve(),
    ),
  );
  images = createGrpcImageService({ socketPath: socket });
});

afterAll(async () => {
  images.close();
  await new Promise<void>((resolve) => server.tryShutdown(() => resolve()));
  rmSync(dir, { recursive: true, force: true });
});

describe('createGrpcImageService', () => {
  it('pulls with credentials and the sandbox config, and returns the image ref', async () => {
    const res = await images.pullImage({
      image: 'reg/app:v1',
      auth: { username: 'u', password: 'p' },
      sandboxConfig: { labels: { a: 'b' }, annotations: { c: 'd' } },
    });
    expect(res).toEqual({ imageRef: 'sha256:abc' });
    expect(received.at(-1)).toMatchObject({
      image: { image: 'reg/app:v1' },
      auth: { username: 'u', password: 'p' },
      sandboxConfig: { labels: { a: 'b' }, annotations: { c: 'd' } },
    });
  });

  it('maps image status and lists, and absence to undefined', async () => {
    expect(await images.imageStatus('reg/app:v1')).toEqual({
      id: 'sha256:abc',
      repoTags: ['reg/app:v1'],
      repoDigests: [],
      size: 896,
    });
    expect(await images.imageStatus('reg/absent:v1')).toBeUndefined();
    expect(await images.listImages()).toEqual([
      { id: 'sha256:abc', repoTags: ['r/a:1'], repoDigests: ['r/a@sha256:d'], size: 12 },
    ]);
  });

  it('keeps the gRPC status and reads like the kubelet', async () => {
    const err = await images.pullImage({ image: 'reg/missing:v1' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CriError);
    expect(err).toMatchObject({
      code: 'DAEMON_ERR_CRI_CALL',
      grpcCode: grpc.status.NOT_FOUND,
      message: 'NotFound: failed to resolve reference "reg/missing:v1": not found',
    });
  });

  it('times out and cancels', async () => {
    await expect(images.pullImage({ image: 'reg/slow:v1' }, { timeoutMs: 50 })).rejects.toMatchObject({
      code: 'DAEMON_ERR_CRI_TIMEOUT',
    });
    const abort = new AbortController();
    const running = images.pullImage({ image: 'reg/slow:v1' }, { signal: abort.signal });
    abort.abort();
    await expect(running).rejects.toMatchObject({ code: 'DAEMON_ERR_CRI_ABORTED' });
  });

  it('fails with a clear code when nothing listens on the socket', async () => {
    const nowhere = createGrpcImageService({ socketPath: path.join(dir, 'none.sock') });
    try {
      await expect(nowhere.listImages({ timeoutMs: 300 })).rejects.toMatchObject({ name: 'CriError' });
    } finally {
      nowhere.close();
    }
  });
});
