/**
 * The node daemon's pull workers for its NodeImage (OpenKruise's realPuller and worker pools):
 * one worker per tag and version, started when the spec asks for a tag the status has not
 * finished, stopped when the tag leaves the spec or gets a new version. Results live here until
 * the status writer publishes them; a finished worker stays registered so the same version is
 * never pulled twice while its result is on its way to the apiserver.
 *
 * With a limit on pulls at once (`maxPulls`, kruise-daemon's --max-workers-for-pull-image in
 * OpenKruise v1.9) a worker without a free slot reports its tag `Waiting` and starts pulling
 * (reporting `Pulling`) when a slot frees, first come first served.
 */
import type { ImageSpec, ImageTagSpec, ImageTagStatus, NodeImage } from '@flotilla/api';
import type { Logger } from 'pino';
import type { Clock } from '../runtime/clock.js';
import type { KubeObject } from '../runtime/kube-object.js';
import { registryAuths, type AuthProblem } from './auth.js';
import type { ImageService } from './cri/image-service.js';
import { PullSlots, type ReleaseSlot } from './pull-slots.js';
import { runPull, type PullTask } from './pull-worker.js';
import type { SecretReader } from './secrets.js';
import { type EventRecording, referencedObject } from '../runtime/events.js';
import { pullReference } from '../kube/nodeimage.js';

export const REASON_PULL_SUCCEEDED = 'PullImageSucceed';
export const REASON_PULL_FAILED = 'PullImageFailed';

export interface PullerDeps {
  images: ImageService;
  secrets: SecretReader;
  events: EventRecording;
  clock: Clock;
  log: Logger;
  /** Pulls running at once; undefined or below 1: no limit. */
  maxPulls?: number;
  /** A worker's status changed: the status should be written. */
  onChange(): void;
}

interface Worker {
  version: number;
  abort: AbortController;
  done: Promise<void>;
}

export class Puller {
  readonly #deps: PullerDeps;
  /** image name → tag → worker */
  readonly #workers = new Map<string, Map<string, Worker>>();
  /** image name → tag → latest status */
  readonly #statuses = new Map<string, Map<string, ImageTagStatus>>();
  readonly #slots: PullSlots;

  constructor(deps: PullerDeps) {
    this.#deps = deps;
    this.#slots = new PullSlots(deps.maxPulls !== undefined && deps.maxPulls >= 1 ? deps.maxPulls : undefined);
  }

  /** Brings the workers in line with `nodeImage`'s spec; its status tells which tags are done. */
  sync(nodeImage: NodeImage): void {
    const images = nodeImage.spec.images ?? {};
    for (const name of [...this.#workers.keys(), ...this.#statuses.keys()]) {
      if (!(name in images)) this.#dropImage(name);
    }
    for (const [name, spec] of Object.entries(images)) {
      const reported = nodeImage.status?.imageStatuses?.[name]?.tags ?? [];
      this.#syncImage(nodeImage, name, spec, reported);
    }
  }

  /** Current statuses of `name`'s tags, sorted by tag; undefined when there are none. */
  statusOf(name: string): ImageTagStatus[] | undefined {
    const tags = [...(this.#statuses.get(name)?.values() ?? [])];
    return tags.length > 0 ? tags.sort((a, b) => (a.tag < b.tag ? -1 : a.tag > b.tag ? 1 : 0)) : undefined;
  }

  /** Number of tags waiting for a pull slot. */
  waiting(): number {
    return this.#slots.waiting();
  }

  /** Number of workers still pulling. */
  active(): number {
    let n = 0;
    for (const tags of this.#statuses.values()) for (const s of tags.values()) if (s.phase === 'Pulling') n++;
    return n;
  }

  /** Aborts every worker and waits for them. */
  async stop(): Promise<void> {
    const done = [...this.#workers.values()].flatMap((tags) => [...tags.values()].map((w) => w.done));
    for (const name of [...this.#workers.keys()]) this.#dropImage(name);
    await Promise.all(done);
  }

  #syncImage(nodeImage: NodeImage, name: string, spec: ImageSpec, reported: ImageTagStatus[]): void {
    const workers = this.#mapOf(this.#workers, name);
    const statuses = this.#mapOf(this.#statuses, name);
    const wanted = new Map(spec.tags.map((t) => [t.tag, t]));
    for (const [tag, worker] of workers) {
      if (wanted.get(tag)?.version !== worker.version) {
        worker.abort.abort();
        workers.delete(tag);
      }
    }
    for (const tag of statuses.keys()) if (!wanted.has(tag)) statuses.delete(tag);
    for (const tag of spec.tags) {
      const version = tag.version ?? 0;
      const done = reported.find((s) => s.tag === tag.tag && s.version === version && s.completionTime);
      if (done) {
        // Finished before (maybe by an earlier daemon): keep the result, pull nothing.
        if (statuses.get(tag.tag)?.version !== version) statuses.set(tag.tag, done);
        continue;
      }
      if (!workers.has(tag.tag)) workers.set(tag.tag, this.#start(nodeImage, name, spec, tag));
    }
  }

  #start(nodeImage: NodeImage, name: string, spec: ImageSpec, tag: ImageTagSpec): Worker {
    const abort = new AbortController();
    const log = this.#deps.log.child({ image: name, tag: tag.tag, version: tag.version ?? 0 });
    const report = (status: ImageTagStatus): void => {
      if (abort.signal.aborted) return;
      this.#mapOf(this.#statuses, name).set(status.tag, status);
      this.#deps.onChange();
    };
    const run = async (): Promise<void> => {
      const release = await this.#slot(tag, abort.signal, report);
      if (!release) return;
      try {
        const task = await this.#task(name, spec, tag);
        const started = this.#deps.clock.now();
        const final = await runPull(
          task,
          { images: this.#deps.images, clock: this.#deps.clock, log, onStatus: report },
          abort.signal,
        );
        if (final && !abort.signal.aborted) this.#emit(nodeImage, task, final, this.#deps.clock.now() - started);
      } finally {
        release();
      }
    };
    const done = run().catch((err: unknown) => log.error({ err }, 'pull worker crashed'));
    return { version: tag.version ?? 0, abort, done };
  }

  /** A pull slot, reporting the tag Waiting while none is free; undefined if stopped meanwhile. */
  async #slot(
    tag: ImageTagSpec,
    signal: AbortSignal,
    report: (status: ImageTagStatus) => void,
  ): Promise<ReleaseSlot | undefined> {
    const now = this.#slots.tryAcquire();
    if (now) return now;
    report({ tag: tag.tag, phase: 'Waiting', version: tag.version ?? 0 });
    return this.#slots.acquire(signal);
  }

  /** Credentials are resolved per worker, so a fixed secret takes effect with the next version. */
  async #task(name: string, spec: ImageSpec, tag: ImageTagSpec): Promise<PullTask> {
    const base = { name, tag, ...(spec.sandboxConfig ? { sandboxConfig: spec.sandboxConfig } : {}) };
    const refs = spec.pullSecrets ?? [];
    if (refs.length === 0) return { ...base, auths: [], authProblems: [] };
    let problems: AuthProblem[];
    let secrets;
    try {
      ({ secrets, problems } = await this.#deps.secrets.read(refs));
    } catch (err) {
      const reason = `could not be read: ${err instanceof Error ? err.message : String(err)}`;
      return { ...base, auths: [], authProblems: refs.map((r) => ({ secret: `${r.namespace}/${r.name}`, reason })) };
    }
    const ref = pullReference(name, tag.tag);
    const matched = ref.ok ? registryAuths(secrets, ref.ref) : { auths: [], problems: [] };
    return { ...base, auths: matched.auths, authProblems: [...problems, ...matched.problems] };
  }

  /** PullImageSucceed / PullImageFailed on every owning job and on the NodeImage. */
  #emit(nodeImage: NodeImage, task: PullTask, final: ImageTagStatus, elapsedMs: number): void {
    const image = `${task.name}:${task.tag.tag}`;
    const [type, reason, message] =
      final.phase === 'Succeeded'
        ? (['Normal', REASON_PULL_SUCCEEDED, `Image ${image}, elapsedTime ${(elapsedMs / 1000).toFixed(3)}s`] as const)
        : (['Warning', REASON_PULL_FAILED, `Image ${image} ${final.message ?? ''}`.trim()] as const);
    const targets: KubeObject[] = [...(task.tag.ownerReferences ?? []).map(referencedObject), nodeImage];
    for (const target of targets) this.#deps.events.event(target, type, reason, message);
  }

  #dropImage(name: string): void {
    for (const worker of this.#workers.get(name)?.values() ?? []) worker.abort.abort();
    this.#workers.delete(name);
    this.#statuses.delete(name);
  }

  #mapOf<V>(maps: Map<string, Map<string, V>>, name: string): Map<string, V> {
    let map = maps.get(name);
    if (!map) maps.set(name, (map = new Map<string, V>()));
    return map;
  }
}
