/**
 * The hub's client of nats-server's `full` account resolver, as a system-account user: push an
 * account JWT (every node stores it; the resolver's pack exchange catches up nodes that were
 * down), delete accounts (each node disables them and closes their connections), list them.
 *
 * Every running node answers an update or a delete itself, so both wait for the answer of each
 * node (counted by a server ping, at most every 10 s): an agent handed its credentials right after a
 * claim may connect to any node, and one that has not stored the account yet would refuse it or
 * answer its JetStream requests with "not enabled for account". A node that does not answer in
 * time is caught up by the resolvers' exchange; the push still counts as done.
 */
import type { NatsConnection } from '@nats-io/transport-node';

const UPDATE = '$SYS.REQ.CLAIMS.UPDATE';
const DELETE = '$SYS.REQ.CLAIMS.DELETE';
const LIST = '$SYS.REQ.CLAIMS.LIST';
const PING = '$SYS.REQ.SERVER.PING';
const TIMEOUT_MS = 5000;
/** A ping's answers stop coming this long after the last one: every running node has answered. */
const PING_STALL_MS = 250;
/** The node count is pinged again after this long, so a burst of claims pays one ping. */
const NODE_COUNT_TTL_MS = 10_000;

export interface AccountResolver {
  update(accountJwt: string): Promise<void>;
  /** `request` is the signed delete request (claims.ts: deleteAccountsRequest). */
  remove(request: string): Promise<void>;
  list(): Promise<string[]>;
}

interface ResolverAnswer {
  data?: unknown;
  error?: { code?: number; description?: string };
}

function checked(subject: string, answer: ResolverAnswer): unknown {
  if (answer.error) {
    throw new Error(
      `${subject} refused: ${answer.error.description ?? 'no description'} (${answer.error.code ?? '?'})`,
    );
  }
  return answer.data;
}

async function ask(nc: NatsConnection, subject: string, body: string): Promise<unknown> {
  const msg = await nc.request(subject, body, { timeout: TIMEOUT_MS });
  return checked(subject, msg.json<ResolverAnswer>());
}

/** How many nodes are running now (each answers the ping). */
async function runningNodes(nc: NatsConnection): Promise<number> {
  let n = 0;
  const answers = await nc.requestMany(PING, '', { strategy: 'stall', stall: PING_STALL_MS, maxWait: TIMEOUT_MS });
  for await (const _ of answers) n++;
  return n;
}

/** The running nodes, counted at most every NODE_COUNT_TTL_MS (concurrent callers share a ping). */
function nodeCounter(nc: NatsConnection): () => Promise<number> {
  let cached: { at: number; count: Promise<number> } | undefined;
  return () => {
    if (!cached || Date.now() - cached.at > NODE_COUNT_TTL_MS) {
      const count = runningNodes(nc).then((n) => Math.max(1, n));
      count.catch(() => (cached = undefined));
      cached = { at: Date.now(), count };
    }
    return cached.count;
  };
}

/** Sends to every node's resolver; resolves once each running node accepted it (or the deadline). */
async function askAll(nc: NatsConnection, nodes: number, subject: string, body: string): Promise<void> {
  const answers = await nc.requestMany(subject, body, { strategy: 'count', maxMessages: nodes, maxWait: TIMEOUT_MS });
  let answered = 0;
  for await (const m of answers) {
    checked(subject, m.json<ResolverAnswer>());
    answered++;
  }
  if (answered === 0) throw new Error(`${subject}: no node answered within ${TIMEOUT_MS} ms`);
}

export function createAccountResolver(nc: NatsConnection): AccountResolver {
  const nodes = nodeCounter(nc);
  return {
    update: async (accountJwt) => askAll(nc, await nodes(), UPDATE, accountJwt),
    remove: async (request) => askAll(nc, await nodes(), DELETE, request),
    async list() {
      const data = await ask(nc, LIST, '');
      return Array.isArray(data) ? data.filter((k): k is string => typeof k === 'string') : [];
    },
  };
}
