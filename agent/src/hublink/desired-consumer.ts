/**
 * Consumes this cluster's desired objects from its named durable consumer and applies them.
 * The durable is created on first start with a filter on the cluster's own subjects and
 * DeliverPolicy.LastPerSubject (the latest value of every object); afterwards it resumes where
 * it stopped, including after NATS outages. A message is acknowledged only after the apply or
 * prune succeeded; a failure naks it for redelivery. Malformed or foreign messages are
 * terminated (never redelivered) and counted.
 */
import { decodeDesired, desiredFilter, parseDesiredSubject, type DesiredMessage } from '@flotilla/api';
import {
  AckPolicy,
  DeliverPolicy,
  jetstream,
  jetstreamManager,
  type ConsumerMessages,
  type JsMsg,
} from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import type { Logger } from 'pino';
import { decideDesired } from './desired-decision.js';
import { errorText } from './error-text.js';
import type { DriftGuard, Serial } from './drift.js';
import type { HubLinkMetrics } from './metrics.js';
import type { StatusReporter } from './status-reporter.js';
import type { HubLinkCredentials, KubeApplier, ObjectRef } from './types.js';

const NANOS_PER_MS = 1_000_000;
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
}

/** Creates the durable if it does not exist yet (only the agent's own name and filter are allowed). */
async function ensureConsumer(nc: NatsConnection, deps: DesiredConsumerDeps): Promise<void> {
  const { desiredStream, consumer } = deps.credentials;
  const jsm = await jetstreamManager(nc, { checkAPI: false });
  try {
    await jsm.consumers.info(desiredStream, consumer);
    return;
  } catch (err) {
    deps.logger.info({ consumer, err: (err as Error).message }, 'creating the desired-state consumer');
  }
  await jsm.consumers.add(desiredStream, {
    durable_name: consumer,
    filter_subject: desiredFilter(deps.cluster),
    deliver_policy: DeliverPolicy.LastPerSubject,
    ack_policy: AckPolicy.Explicit,
    ack_wait: 60_000 * NANOS_PER_MS,
    max_deliver: -1,
    max_ack_pending: 1000,
  });
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

async function act(msg: DesiredMessage, ref: ObjectRef, deps: DesiredConsumerDeps): Promise<void> {
  const decision = decideDesired(msg, await deps.kube.get(ref));
  // A tombstone ends the guard even when there is nothing to delete (already gone, or no longer
  // labelled as the hub's): re-applying would bring back what the hub removed.
  if (msg.deleted && decision.action !== 'delete' && !(decision.action === 'skip' && decision.reason === 'stale')) {
    deps.guard.forget(ref);
  }
  if (decision.action === 'apply') {
    await deps.guard.apply(ref, decision.manifest, msg.generation);
    deps.metrics.applied.inc();
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
  }
}

export interface DesiredConsumer {
  stop(): Promise<void>;
}

export async function startDesiredConsumer(nc: NatsConnection, deps: DesiredConsumerDeps): Promise<DesiredConsumer> {
  await ensureConsumer(nc, deps);
  const js = jetstream(nc, { checkAPI: false });
  const consumer = await js.consumers.get(deps.credentials.desiredStream, deps.credentials.consumer);
  const messages: ConsumerMessages = await consumer.consume({ max_messages: 100 });
  const loop = (async () => {
    for await (const m of messages) await handle(m, deps);
  })().catch((err: unknown) => deps.logger.error({ err }, 'desired-state consumer stopped'));
  return {
    async stop() {
      await messages.close();
      await loop;
    },
  };
}
