/**
 * Whether a workload's desired messages can be published, checked when its content is written:
 * a message larger than the DESIRED stream's max_msg_size or nats-server's max_payload would be
 * refused by the relay and never reach its cluster. Pure; the limit is the caller's.
 *
 * A message is measured as the relay sends it (domain/desired-message.ts, compact JSON, UTF-8)
 * with the widest values its envelope can take, so no later change of them can push it over:
 * the longest cluster name (in the envelope and the manifest's cluster annotation), the largest
 * revision and generation. Both limits count the headers too; WIRE_ALLOWANCE holds them (under
 * 600 bytes: a message id of at most ~510, the subject with a generation and a link or repair
 * tag, and the expected stream) and a rollout's partition, which the hub writes into a
 * CloneSet's spec (~40 bytes).
 */
import type { FieldProblem, Overrides, WorkloadMetadata } from '@flotilla/api';
import { desiredMessage } from './desired-message.js';
import { renderManifest, type WorkloadIdentity } from './manifest.js';

export const WIRE_ALLOWANCE = 1024;

/** A cluster name is a DNS-1123 label: 63 characters at most. */
const WIDEST_CLUSTER = 'x'.repeat(63);
/** Workload ids are UUIDs: one of the same length stands in for a workload not stored yet. */
const PLACEHOLDER_ID = '00000000-0000-0000-0000-000000000000';
const MAX_REVISION = 2_147_483_647;
const EPOCH = new Date(0);

export interface SizedContent {
  metadata: WorkloadMetadata;
  spec: Record<string, unknown>;
  overrides: Overrides;
}

const bytes = (value: unknown): number => Buffer.byteLength(JSON.stringify(value));

/** The most bytes the desired message of `content` for `cluster` can take on the wire. */
export function desiredMessageBytes(
  workload: Omit<WorkloadIdentity, 'id'>,
  content: SizedContent,
  cluster: string,
): number {
  const identity = { ...workload, id: PLACEHOLDER_ID };
  const manifest = renderManifest(identity, { ...content, revision: MAX_REVISION }, cluster);
  const message = desiredMessage(
    identity,
    { cluster, generation: Number.MAX_SAFE_INTEGER, revision: MAX_REVISION, deleted: false, manifest },
    EPOCH,
  );
  return bytes(message) + WIRE_ALLOWANCE;
}

function tooLarge(who: string, size: number, maxBytes: number): string {
  return (
    `Too large: the desired message for ${who} would take up to ${size} bytes, ` +
    `and at most ${maxBytes} can be published (the DESIRED stream's max_msg_size and nats-server's max_payload)`
  );
}

/**
 * One problem per message that would be too large: the template's (path `spec`, or `metadata`
 * when that is the larger part) for any cluster without an override, and each override's
 * (`overrides.<cluster>`).
 */
export function desiredSizeProblems(
  workload: Omit<WorkloadIdentity, 'id'>,
  content: SizedContent,
  maxBytes: number,
): FieldProblem[] {
  const problems: FieldProblem[] = [];
  const base = desiredMessageBytes(workload, { ...content, overrides: {} }, WIDEST_CLUSTER);
  if (base > maxBytes) {
    const path = bytes(content.metadata) > bytes(content.spec) ? 'metadata' : 'spec';
    problems.push({ path, message: tooLarge('any cluster', base, maxBytes) });
  }
  for (const cluster of Object.keys(content.overrides)) {
    const size = desiredMessageBytes(workload, content, cluster);
    if (size > maxBytes) {
      problems.push({ path: `overrides.${cluster}`, message: tooLarge(`cluster ${cluster}`, size, maxBytes) });
    }
  }
  return problems;
}
