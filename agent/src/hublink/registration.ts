/**
 * The agent's side of double opt-in registration: register with the bootstrap token (the hub
 * answers with a one-time registration secret), wait until an operator accepts the cluster,
 * then claim the NATS credentials — once. The secret and the credentials are saved in a
 * CredentialStore (a Secret in the cluster in production) after each step, so a restarted agent
 * resumes instead of registering again, and never needs the bootstrap token after joining.
 */
import { sleep, type AgentCredentials } from '@flotilla/api';
import type { Logger } from 'pino';
import { RegistrationError } from '../errors.js';

export interface JoinState {
  registrationSecret?: string;
  credentials?: AgentCredentials;
}

export interface CredentialStore {
  load(): Promise<JoinState | undefined>;
  save(state: JoinState): Promise<void>;
}

export function memoryCredentialStore(initial?: JoinState): CredentialStore {
  let state = initial;
  return {
    load: () => Promise.resolve(state),
    save: (s) => {
      state = s;
      return Promise.resolve();
    },
  };
}

export interface JoinOptions {
  hubUrl: string;
  bootstrapToken: string;
  clusterName: string;
  labels: Record<string, string>;
  agentVersion: string;
  kubernetesVersion: string;
  store: CredentialStore;
  logger: Logger;
  fetch?: typeof fetch;
  pollIntervalMs?: number;
  signal?: AbortSignal;
}

interface HubReply {
  status: number;
  code: string | undefined;
  body: unknown;
}

async function post(o: JoinOptions, path: string, body: unknown): Promise<HubReply> {
  const res = await (o.fetch ?? fetch)(`${o.hubUrl.replace(/\/$/, '')}/api/v1${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${o.bootstrapToken}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
    ...(o.signal ? { signal: o.signal } : {}),
  });
  const parsed: unknown = await res.json().catch(() => undefined);
  const code = (parsed as { error?: { code?: string } } | undefined)?.error?.code;
  return { status: res.status, code, body: parsed };
}

/** Returns the cluster's NATS credentials, registering and waiting for acceptance as needed. */
export async function joinFleet(o: JoinOptions): Promise<AgentCredentials> {
  const state = (await o.store.load()) ?? {};
  if (state.credentials) return state.credentials;
  if (!state.registrationSecret) {
    const reply = await post(o, '/clusters/register', {
      name: o.clusterName,
      labels: o.labels,
      agentVersion: o.agentVersion,
      kubernetesVersion: o.kubernetesVersion,
    });
    if (reply.status !== 201) {
      throw new RegistrationError('AGENT_ERR_HUB_JOIN', `registration refused (HTTP ${reply.status})`, reply.code);
    }
    state.registrationSecret = (reply.body as { registrationSecret: string }).registrationSecret;
    await o.store.save(state);
    o.logger.info({ cluster: o.clusterName }, 'registered with the hub; waiting for an operator to accept');
  }
  for (;;) {
    const reply = await post(o, `/clusters/${o.clusterName}/claim`, { registrationSecret: state.registrationSecret });
    if (reply.status === 200) {
      state.credentials = reply.body as AgentCredentials;
      await o.store.save(state);
      return state.credentials;
    }
    if (reply.code === 'HUB_ERR_REGISTRATION_REFUSED') {
      // The hub no longer holds this registration (it expired while pending, or the cluster was
      // removed): forget the secret, so the next attempt registers again.
      delete state.registrationSecret;
      await o.store.save(state);
    }
    if (reply.code !== 'HUB_ERR_CLUSTER_NOT_ACCEPTED') {
      // Already claimed (credentials lost: an admin must rotate them), wrong secret, removed...
      throw new RegistrationError(
        'AGENT_ERR_HUB_JOIN',
        `claiming credentials failed (HTTP ${reply.status})`,
        reply.code,
      );
    }
    await sleep(o.pollIntervalMs ?? 5000, { signal: o.signal });
    if (o.signal?.aborted) throw new RegistrationError('AGENT_ERR_HUB_JOIN_ABORTED', 'joining the fleet was aborted');
  }
}
