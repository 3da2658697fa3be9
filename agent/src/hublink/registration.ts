/**
 * The agent's side of double opt-in registration (docs/adr/0012): create the cluster's user nkey
 * (its seed never leaves the cluster), register its public key with the bootstrap token (the hub
 * answers with a one-time registration secret), wait until an operator accepts the cluster, then
 * claim the NATS credentials — once — with a request signed by the key. The key, the secret and
 * the credentials are saved in a CredentialStore (a Secret in the cluster in production) after
 * each step, so a restarted agent resumes instead of registering again, and never needs the
 * bootstrap token after joining. Renewal (credential-renewal.ts) needs only the key.
 */
import {
  SIGNATURE_HEADER,
  newAgentKey,
  publicKeyOfSeed,
  signRequest,
  sleep,
  type AgentCredentials,
} from '@flotilla/api';
import type { Logger } from 'pino';
import { RegistrationError } from '../errors.js';
import { hubFetch, type HubFetch } from './hub-fetch.js';

export interface JoinState {
  /** The seed of the cluster's user nkey: never logged, never sent. */
  seed?: string;
  registrationSecret?: string;
  credentials?: AgentCredentials;
}

/** The claimed credentials and the seed that signs the agent's NATS connects and requests. */
export type JoinedCredentials = AgentCredentials & { seed: string };

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
  fetch?: HubFetch;
  pollIntervalMs?: number;
  signal?: AbortSignal;
}

export interface HubReply {
  status: number;
  code: string | undefined;
  body: unknown;
}

export interface HubPost {
  hubUrl: string;
  /** Sent as a bearer token when given. */
  bootstrapToken?: string;
  /** Signs the request (SIGNATURE_HEADER) when given. */
  seed?: string;
  fetch?: HubFetch;
  signal?: AbortSignal;
}

/** POSTs JSON to the hub's API; answers the status, the error code and the body. */
export async function postToHub(o: HubPost, path: string, body: unknown): Promise<HubReply> {
  const url = `/api/v1${path}`;
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (o.bootstrapToken) headers['authorization'] = `Bearer ${o.bootstrapToken}`;
  if (o.seed) headers[SIGNATURE_HEADER] = signRequest(o.seed, { method: 'POST', path: url, body }, Date.now());
  const res = await (o.fetch ?? hubFetch({ caPem: undefined, insecure: false }))(
    `${o.hubUrl.replace(/\/$/, '')}${url}`,
    {
      method: 'POST',
      headers,
      body: JSON.stringify(body),
      ...(o.signal ? { signal: o.signal } : {}),
    },
  );
  const parsed: unknown = await res.json().catch(() => undefined);
  const code = (parsed as { error?: { code?: string } } | undefined)?.error?.code;
  return { status: res.status, code, body: parsed };
}

const post = (o: JoinOptions, path: string, body: unknown, seed?: string): Promise<HubReply> =>
  postToHub({ ...o, ...(seed ? { seed } : {}) }, path, body);

/** The state with a user nkey: created (and saved) on the first start. */
async function withKey(o: JoinOptions, state: JoinState): Promise<JoinState & { seed: string }> {
  if (state.seed) return state as JoinState & { seed: string };
  const key = newAgentKey();
  const keyed = { ...state, seed: key.seed };
  await o.store.save(keyed);
  o.logger.info({ cluster: o.clusterName, publicKey: key.publicKey }, 'created the cluster’s NATS key');
  return keyed;
}

/** Returns the cluster's NATS credentials, registering and waiting for acceptance as needed. */
export async function joinFleet(o: JoinOptions): Promise<JoinedCredentials> {
  const state = await withKey(o, (await o.store.load()) ?? {});
  if (state.credentials) return { ...state.credentials, seed: state.seed };
  if (!state.registrationSecret) {
    const reply = await post(o, '/clusters/register', {
      name: o.clusterName,
      publicKey: publicKeyOfSeed(state.seed),
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
    const reply = await post(
      o,
      `/clusters/${o.clusterName}/claim`,
      { registrationSecret: state.registrationSecret },
      state.seed,
    );
    if (reply.status === 200) {
      state.credentials = reply.body as AgentCredentials;
      await o.store.save(state);
      return { ...state.credentials, seed: state.seed };
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
