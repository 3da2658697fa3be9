/**
 * An in-memory ImageService for unit tests: a "registry" of references the test publishes
 * (moving a tag changes its id), a node store that pulls copy from, scripted failures, optional
 * credentials per registry, and slow pulls that honour timeouts and cancellation.
 */
import { CriError } from '../../errors.js';
import type { CallOptions, ImageInfo, ImageService, PullImageRequest } from './image-service.js';

export interface FakePullCall {
  image: string;
  username: string | undefined;
  sandboxLabels: Record<string, string> | undefined;
}

export class FakeImageService implements ImageService {
  /** Every pullImage call, in order. */
  readonly pulls: FakePullCall[] = [];
  readonly #registry = new Map<string, string>();
  readonly #node = new Map<string, ImageInfo>();
  readonly #credentials = new Map<string, { username: string; password: string }>();
  readonly #failures: Error[] = [];
  #unreachable = new Set<string>();
  /** A pull waits this long (real ms) before answering; lets tests hit timeouts and aborts. */
  pullDelayMs = 0;

  /** Makes `ref` available in the registry with image id `id` (pushing again moves the tag). */
  publish(ref: string, id: string): void {
    this.#registry.set(ref, id);
  }

  /** Pretends `ref` is already on the node. */
  preload(ref: string, id: string): void {
    this.#node.set(ref, { id, repoTags: [ref], repoDigests: [], size: 1 });
  }

  /** Pulls from `host` need this user. */
  requireAuth(host: string, username: string, password: string): void {
    this.#credentials.set(host, { username, password });
  }

  /** Pulls from `host` fail as if nothing listened there. */
  makeUnreachable(host: string): void {
    this.#unreachable.add(host);
  }

  /** The next pulls fail with these errors, one each. */
  failNext(...errors: Error[]): void {
    this.#failures.push(...errors);
  }

  async pullImage(req: PullImageRequest, options: CallOptions = {}): Promise<{ imageRef: string }> {
    this.pulls.push({
      image: req.image,
      username: req.auth?.username,
      sandboxLabels: req.sandboxConfig?.labels,
    });
    await this.#wait(options);
    const scripted = this.#failures.shift();
    if (scripted) throw scripted;
    const host = req.image.split('/')[0] ?? '';
    if (this.#unreachable.has(host)) {
      throw new CriError('DAEMON_ERR_CRI_CALL', `Unknown: dial tcp ${host}: connect: connection refused`, 2);
    }
    const cred = this.#credentials.get(host);
    if (cred && (req.auth?.username !== cred.username || req.auth?.password !== cred.password)) {
      throw new CriError('DAEMON_ERR_CRI_CALL', `Unknown: pulling from host ${host} failed: 401 Unauthorized`, 2);
    }
    const id = this.#registry.get(req.image);
    if (!id) throw new CriError('DAEMON_ERR_CRI_CALL', `NotFound: ${req.image}: not found`, 5);
    this.#node.set(req.image, { id, repoTags: [req.image], repoDigests: [], size: 1 });
    return { imageRef: id };
  }

  imageStatus(image: string): Promise<ImageInfo | undefined> {
    return Promise.resolve(this.#node.get(image));
  }

  listImages(): Promise<ImageInfo[]> {
    return Promise.resolve([...this.#node.values()]);
  }

  close(): void {}

  #wait(options: CallOptions): Promise<void> {
    if (this.pullDelayMs <= 0) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const done = (err?: Error): void => {
        clearTimeout(pull);
        clearTimeout(deadline);
        options.signal?.removeEventListener('abort', onAbort);
        if (err) reject(err);
        else resolve();
      };
      const onAbort = (): void => done(new CriError('DAEMON_ERR_CRI_ABORTED', 'pullImage was cancelled', 1));
      const pull = setTimeout(() => done(), this.pullDelayMs);
      const deadline = setTimeout(
        () => done(new CriError('DAEMON_ERR_CRI_TIMEOUT', 'DeadlineExceeded: context deadline exceeded', 4)),
        options.timeoutMs ?? 2 ** 30,
      );
      options.signal?.addEventListener('abort', onAbort, { once: true });
    });
  }
}
