/**
 * The hub's client of nats-server's `full` account resolver, as a system-account user: push an
 * account JWT (every node stores it; the resolver's pack exchange catches up nodes that were
 * down), delete accounts (each node disables them and closes their connections), list them.
 */
import type { NatsConnection } from '@nats-io/transport-node';

const UPDATE = '$SYS.REQ.CLAIMS.UPDATE';
const DELETE = '$SYS.REQ.CLAIMS.DELETE';
const LIST = '$SYS.REQ.CLAIMS.LIST';
const TIMEOUT_MS = 5000;

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

async function ask(nc: NatsConnection, subject: string, body: string): Promise<unknown> {
  const msg = await nc.request(subject, body, { timeout: TIMEOUT_MS });
  const answer = msg.json<ResolverAnswer>();
  if (answer.error) {
    throw new Error(
      `${subject} refused: ${answer.error.description ?? 'no description'} (${answer.error.code ?? '?'})`,
    );
  }
  return answer.data;
}

export function createAccountResolver(nc: NatsConnection): AccountResolver {
  return {
    async update(accountJwt) {
      await ask(nc, UPDATE, accountJwt);
    },
    async remove(request) {
      await ask(nc, DELETE, request);
    },
    async list() {
      const data = await ask(nc, LIST, '');
      return Array.isArray(data) ? data.filter((k): k is string => typeof k === 'string') : [];
    },
  };
}
