/**
 * Consumes this cluster's desired objects from its named durable consumer and applies them.
 * The hub creates the durable (filtered to the cluster's own subjects, the latest value of every
 * object first) before it hands out the credentials, and deletes it when the cluster is removed;
 * the agent may not create or change it. Should it be missing (a hub that has not caught up, a
 * durable being repaired), the agent waits and looks again with backoff. Afterwards it resumes
 * where it stopped, including after NATS outages. A message is acknowledged only after the apply
 * or prune succeeded; a failure naks it for redelivery. Malformed or foreign messages are
 * terminated (never redelivered) and counted.
 */
import {
  DESIRED_WORKING_INTERVAL_MS,
  decodeDesired,
  parseDesiredSubject,
  sleep,
  type DesiredMessage,
} from '@flotilla/api';
import {
  JetStreamApiCodes,
  JetStreamApiError,
  jetstream,
  type Consumer,
  type ConsumerMessages,
  type JetStreamClient,
  type JsMsg,
} from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import type { Logger } from 'pino';
import { backoffDelay, type BackoffOptions } from '../runtime/backoff.js';
import { decideDesired, type DesiredDecision } from './desired-decision.js';
import { errorText } from './error-text.js';
import type { DriftGuard, Serial } from './drift.js';
import type { FinishedJobs } from './finished-job-store.js';
import { manifestTemplateHash, ranTemplate } from './finished-jobs.js';
import type { HubLinkMetrics } from './metrics.js';
import type { StatusReporter } from './status-reporter.js';
import type { HubLinkCredentials, KubeApplier, ObjectRef } from './types.js';

/** The status message for an object the hub may not write (hub users read it). */
export const NOT_MANAGED_MESSAGE =
  'an object of this name exists without the flotilla.io/managed-by=hub label; label it to hand it to the hub';

export interface DesiredConsumerDeps {
  cluster: string;
  credentials: HubLinkCredentials;
  kube: KubeApplier;
  logger: Logger;
  metrics: HubLinkMetrics;
  status: StatusReporter;
  retryDelayMs: number;
  /** Applies and prunes, remembering what was applied to repair drift later. */
  guard: DriftGuard;
  /** Shared with drift repair: one write to the cluster at a time. */
  serial: Serial;
  /** Finished BroadcastJob runs that removed themselves (finished-jobs.ts); none by default. */
  finished?: FinishedJobs;
  /** How long to wait between looks for a missing durable (default 0.5 s growing to 30 s). */
  missingBackoff?: BackoffOptions;
}

const MISSING_BACKOFF: BackoffOptions = { initialMs: 500, maxMs: 30_000 };

function isConsumerNotFound(err: unknown): boolean {
  return err instanceof JetStreamApiError && err.code === JetStreamApiCodes.ConsumerNotFound;
}

/**
 * The cluster's durable, once it exists; undefined when aborted first. Any other failure (no
 * permission, NATS gone) ends the wait with that error.
 */
async function awaitDurable(
  js: JetStreamClient,
  deps: DesiredConsumerDeps,
  signal: AbortSignal,
): Promise<Consumer | undefined> {
  const { desiredStream, consumer } = deps.credentials;
  for (let attempt = 1; !signal.aborted; attempt++) {
    try {
      return await js.consumers.get(desiredStream, consumer);
    } catch (err) {
      if (!isConsumerNotFound(err)) throw err;
    }
    const delay = backoffDelay(attempt, deps.missingBackoff ?? MISSING_BACKOFF);
    deps.metrics.consumerMissing.inc();
    deps.logger.warn(
      { consumer, retryInMs: Math.round(delay) },
      'the desired-state consumer does not exist yet; waiting for the hub to create it',
    );
    await sleep(delay, { signal });
  }
  return undefined;
}

/**
 * Ends a round of consuming when the durable disappears (the hub deletes and re-creates one it
 * repairs): the agent then looks for the new one, instead of the client's slow probing for it.
 */
async function endWhenDeleted(messages: ConsumerMessages, deps: DesiredConsumerDeps): Promise<void> {
  for await (const n of messages.status()) {
    if (n.type === 'consumer_deleted' || n.type === 'consumer_not_found') {
      deps.metrics.consumerMissing.inc();
      deps.logger.warn(
        { consumer: deps.credentials.consumer, event: n.type },
        'the desired-state consumer is gone; waiting for the hub to create it again',
      );
      await messages.close();
      return;
    }
  }
}

export type Verdict = { ok: true; msg: DesiredMessage; ref: ObjectRef } | { ok: false; reason: string; detail: string };

/** Pure: whether a desired message is this cluster's and well-formed (fuzzed in test/bench/fuzz). */
export function validateDesired(m: Pick<JsMsg, 'subject' | 'data'>, cluster: string): Verdict {
  const key = parseDesiredSubject(m.subject);
  if (!key || key.cluster !== cluster) return { ok: false, reason: 'foreign', detail: m.subject };
  const decoded = decodeDesired(m.data);
  if (!decoded.ok) return { ok: false, reason: decoded.reason, detail: decoded.detail };
  const msg = decoded.value;
  if (msg.cluster !== cluster || msg.kind !== key.kind || msg.namespace !== key.namespace || msg.name !== key.name) {
    return { ok: false, reason: 'foreign', detail: `payload does not match ${m.subject}` };
  }
  return { ok: true, msg, ref: { kind: msg.kind, namespace: msg.namespace, name: msg.name } };
}

/**
 * Keeps the memory of a finished BroadcastJob run (finished-jobs.ts) in step with a desired
 * message. True when the message is answered by the run: the job ran this template and removed
 * itself, so there is nothing to apply or guard, and the run's report now answers this message.
 * A tombstone or another template ends the memory.
 */
async function settleFinishedRun(
  msg: DesiredMessage,
  ref: ObjectRef,
  decision: DesiredDecision,
  deps: DesiredConsumerDeps,
): Promise<boolean> {
  const run = deps.finished?.get(ref);
  if (!run) return false;
  if (decision.action === 'skip' && decision.reason === 'finished') {
    deps.guard.forget(ref);
    await deps.finished?.answered(ref, msg);
    deps.logger.debug({ ref, generation: msg.generation }, 'not applying: the job already ran this template');
    deps.status.kick();
    return true;
  }
  const stale = decision.action === 'skip' && decision.reason === 'stale';
  if (stale || (!msg.deleted && ranTemplate(run, manifestTemplateHash(msg.manifest)))) return false;
  await deps.finished?.forget(ref);
  // The hub removed a job that is already gone: what it reported stands no more.
  if (msg.deleted && decision.action !== 'delete') await deps.status.reportGone(ref, 'Deleted', msg);
  return false;
}

async function act(msg: DesiredMessage, ref: ObjectRef, deps: DesiredConsumerDeps): Promise<void> {
  const run = deps.finished?.get(ref);
  const decision = decideDesired(msg, await deps.kube.get(ref), run);
  if (await settleFinishedRun(msg, ref, decision, deps)) return;
  // A tombstone ends the guard even when there is nothing to delete (already gone, or no longer
  // labelled as the hub's): re-applying would bring back what the hub removed.
  if (msg.deleted && decision.action !== 'delete' && !(decision.action === 'skip' && decision.reason === 'stale')) {
    deps.guard.forget(ref);
  }
  if (decision.action === 'apply') {
    await deps.guard.apply(ref, decision.manifest, msg.generation);
    deps.metrics.applied.inc();
    deps.status.kick();
  } else if (decision.action === 'replace') {
    deps.logger.info(
      { ref, generation: msg.generation, revision: msg.revision, reason: decision.reason },
      'replacing the job so that it runs the new template',
    );
    await deps.guard.replace(ref, decision.manifest, msg.generation);
    deps.metrics.applied.inc();
    deps.metrics.replaced.inc();
    deps.status.kick();
  } else if (decision.action === 'delete') {
    await deps.guard.delete(ref);
    deps.metrics.pruned.inc();
    await deps.status.reportGone(ref, 'Deleted', msg);
  } else if (decision.reason === 'not-managed' && !msg.deleted) {
    // Someone else's object of the same name (or one taken over): not ours to write. The status
    // pass does not list it, so the hub sees the object Missing in this cluster.
    deps.guard.forget(ref);
    deps.metrics.released.inc();
    deps.logger.info(
      { ref, generation: msg.generation },
      'not applying: an object of the same name exists without the managed-by label',
    );
    await deps.status.reportGone(ref, 'Missing', msg, NOT_MANAGED_MESSAGE);
  } else {
    deps.logger.debug({ ref, generation: msg.generation, reason: decision.reason }, 'skipping desired message');
    if (decision.reason === 'stale') deps.metrics.dropped.inc({ reason: 'stale' });
  }
}

async function handle(m: JsMsg, deps: DesiredConsumerDeps): Promise<void> {
  const v = validateDesired(m, deps.cluster);
  if (!v.ok) {
    deps.metrics.dropped.inc({ reason: v.reason });
    deps.logger.warn({ subject: m.subject, reason: v.reason, detail: v.detail }, 'dropping desired message');
    m.term(v.reason);
    return;
  }
  const { msg, ref } = v;
  // Queued behind other objects or applying slowly: keep the message ours (ack wait is short).
  const working = setInterval(() => m.working(), DESIRED_WORKING_INTERVAL_MS);
  try {
    await deps.serial.run(() => act(msg, ref, deps));
    m.ack();
  } catch (err) {
    deps.metrics.applyFailures.inc();
    deps.logger.warn(
      { error: errorText(err), ref, generation: msg.generation },
      'applying desired state failed; will retry',
    );
    m.nak(deps.retryDelayMs);
  } finally {
    clearInterval(working);
  }
}

export interface DesiredConsumer {
  /** Resolves once consuming, or once stopped while still waiting for the durable. */
  ready: Promise<void>;
  stop(): Promise<void>;
}

/**
 * Starts consuming as soon as the durable exists, and binds to it again whenever it is deleted
 * and re-created. `ready` resolves on the first bind (or a stop before it), and rejects when the
 * first look failed otherwise than by the durable's absence; later failures are retried.
 */
export function startDesiredConsumer(nc: NatsConnection, deps: DesiredConsumerDeps): DesiredConsumer {
  const aborted = new AbortController();
  const js = jetstream(nc, { checkAPI: false, apiPrefix: deps.credentials.apiPrefix });
  let messages: ConsumerMessages | undefined;
  let bound: () => void = () => undefined;
  const firstBind = new Promise<void>((resolve) => (bound = resolve));

  /** One round: consume until stopped or until the durable is gone. */
  async function consumeRound(consumer: Consumer): Promise<void> {
    // 10 s pulls (the client's default is 30 s): pulls lost in a restart of the whole NATS cluster
    // are noticed after two missed heartbeats, half the expiry each, and re-issued.
    const round = await consumer.consume({ max_messages: 100, expires: 10_000 });
    messages = round;
    bound();
    void endWhenDeleted(round, deps).catch(() => undefined);
    for await (const m of round) await handle(m, deps);
  }

  /** Looks for the durable again after a round ended, retrying failures; undefined once stopped. */
  async function lookAgain(): Promise<Consumer | undefined> {
    for (let attempt = 1; !aborted.signal.aborted; attempt++) {
      try {
        return await awaitDurable(js, deps, aborted.signal);
      } catch (err) {
        deps.logger.warn({ error: errorText(err) }, 'looking for the desired-state consumer failed; retrying');
        await sleep(backoffDelay(attempt, deps.missingBackoff ?? MISSING_BACKOFF), { signal: aborted.signal });
      }
    }
    return undefined;
  }

  async function rounds(): Promise<void> {
    // The first look's failures end the start (the hub link retries it); later ones are retried here.
    let consumer = await awaitDurable(js, deps, aborted.signal);
    while (consumer && !aborted.signal.aborted) {
      await consumeRound(consumer).catch((err: unknown) =>
        deps.logger.warn({ error: errorText(err) }, 'consuming desired state failed; binding again'),
      );
      // A pause between rounds: a round that keeps ending at once must not spin.
      await sleep((deps.missingBackoff ?? MISSING_BACKOFF).initialMs, { signal: aborted.signal });
      consumer = await lookAgain();
    }
  }

  const loop = rounds();
  const ready = Promise.race([firstBind, loop]);
  loop.catch((err: unknown) => deps.logger.error({ error: errorText(err) }, 'desired-state consumer stopped'));
  return {
    ready,
    async stop() {
      aborted.abort();
      await messages?.close();
      await loop.catch(() => undefined);
    },
  };
}
