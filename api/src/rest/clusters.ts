/** Cluster registration (double opt-in), labels, maintenance windows, health, credentials. */
import { Type, type Static } from 'typebox';
import { MaintenanceWindows } from '../schedule/window.js';
import { LabelMap, Page, PageQuery } from './common.js';

export const ClusterState = Type.Union([Type.Literal('pending'), Type.Literal('accepted'), Type.Literal('removed')]);
export type ClusterState = Static<typeof ClusterState>;

/** Pending/Removed follow the state; an accepted cluster is Online while heartbeats are fresh. */
export const ClusterHealth = Type.Union([
  Type.Literal('Pending'),
  Type.Literal('Online'),
  Type.Literal('Offline'),
  Type.Literal('Removed'),
]);
export type ClusterHealth = Static<typeof ClusterHealth>;

export const ClusterName = Type.String({ minLength: 1, maxLength: 63, pattern: '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$' });

export const Cluster = Type.Object({
  name: Type.String(),
  labels: LabelMap,
  state: ClusterState,
  health: ClusterHealth,
  agentVersion: Type.Union([Type.String(), Type.Null()]),
  kubernetesVersion: Type.Union([Type.String(), Type.Null()]),
  lastHeartbeatAt: Type.Union([Type.String(), Type.Null()]),
  registeredAt: Type.String(),
  acceptedAt: Type.Union([Type.String(), Type.Null()]),
  credentialsIssued: Type.Boolean(),
  /** The agent's current user public key (null once an admin revoked it). */
  publicKey: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  /** When the NATS user JWT last issued to the agent expires (it renews at 2/3); null: none issued. */
  credentialExpiresAt: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  /** When a rollout may start updating the cluster; empty: at any time. */
  maintenanceWindows: MaintenanceWindows,
  /** The cluster's Prometheus the hub asks for metric analysis; null: none. */
  prometheusUrl: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  /** The name of the hub-side file holding its bearer token (never the token); null: none. */
  prometheusTokenRef: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  /** The names of the hub-side files holding its basic-auth username and password; null: none. */
  prometheusBasicAuth: Type.Optional(
    Type.Union([Type.Object({ usernameRef: Type.String(), passwordRef: Type.String() }), Type.Null()]),
  ),
  /** The name of the hub-side file holding the CA bundle that verifies its https URL; null: system CAs. */
  prometheusCaRef: Type.Optional(Type.Union([Type.String(), Type.Null()])),
});
export type Cluster = Static<typeof Cluster>;

export const ClusterList = Page(Cluster);
export type ClusterList = Static<typeof ClusterList>;

export const ClusterListQuery = Type.Object({
  ...PageQuery.properties,
  labelSelector: Type.Optional(Type.String({ maxLength: 2048 })),
  health: Type.Optional(ClusterHealth),
});
export type ClusterListQuery = Static<typeof ClusterListQuery>;

/** An agent's user nkey public key: its identity at the hub (docs/adr/0012). */
export const AgentPublicKey = Type.String({ pattern: '^U[A-Z2-7]{55}$' });

export const RegisterClusterRequest = Type.Object(
  {
    name: ClusterName,
    /** The agent's user nkey; only the public key ever leaves the cluster. */
    publicKey: AgentPublicKey,
    labels: Type.Optional(LabelMap),
    agentVersion: Type.Optional(Type.String({ maxLength: 64 })),
    kubernetesVersion: Type.Optional(Type.String({ maxLength: 64 })),
  },
  { additionalProperties: false },
);
export type RegisterClusterRequest = Static<typeof RegisterClusterRequest>;

/** The registration secret is shown once; the agent presents it to claim its credentials. */
export const RegisterClusterResponse = Type.Object({ cluster: Cluster, registrationSecret: Type.String() });
export type RegisterClusterResponse = Static<typeof RegisterClusterResponse>;

export const ClaimCredentialsRequest = Type.Object(
  { registrationSecret: Type.String({ minLength: 1, maxLength: 256 }) },
  { additionalProperties: false },
);
export type ClaimCredentialsRequest = Static<typeof ClaimCredentialsRequest>;

/** A credential renewal: the signature (Authorization: Flotilla-NKey) is the authentication. */
export const RenewCredentialsRequest = Type.Object({}, { additionalProperties: false });
export type RenewCredentialsRequest = Static<typeof RenewCredentialsRequest>;

/** A re-key: the new public key, in a request signed with the current key. */
export const RekeyCredentialsRequest = Type.Object({ publicKey: AgentPublicKey }, { additionalProperties: false });
export type RekeyCredentialsRequest = Static<typeof RekeyCredentialsRequest>;

/**
 * Everything an agent needs to reach its durable over NATS: a user JWT for its own public key
 * (useless without the seed, which never leaves the cluster) and where to use it. Returned to
 * signed claim, renew and re-key requests only.
 */
export const AgentCredentials = Type.Object({
  cluster: Type.String(),
  nats: Type.Object({
    servers: Type.Array(Type.String()),
    /** The user JWT, signed by the hub for the agent's public key. */
    jwt: Type.String(),
    /** When the JWT expires (ISO 8601); the agent renews at 2/3 of its lifetime. */
    expiresAt: Type.String(),
    inboxPrefix: Type.String(),
    /** The JetStream API prefix of the agent's account (AGENT_JS_API_PREFIX). */
    apiPrefix: Type.String(),
    desiredStream: Type.String(),
    consumer: Type.String(),
  }),
});
export type AgentCredentials = Static<typeof AgentCredentials>;

export const SetClusterLabelsRequest = Type.Object({ labels: LabelMap }, { additionalProperties: false });
export type SetClusterLabelsRequest = Static<typeof SetClusterLabelsRequest>;

/** Replaces the cluster's maintenance windows (an empty list: rollouts may start it at any time). */
export const SetMaintenanceWindowsRequest = Type.Object(
  { windows: MaintenanceWindows },
  { additionalProperties: false },
);
export type SetMaintenanceWindowsRequest = Static<typeof SetMaintenanceWindowsRequest>;

/**
 * A file in the hub's FLOTILLA_PROMETHEUS_SECRETS_DIR (e.g. a mounted Secret's key): a plain name,
 * no path. Credentials pass by such references only, never through the API.
 */
export const PrometheusSecretRef = Type.String({
  minLength: 1,
  maxLength: 253,
  pattern: '^[A-Za-z0-9][A-Za-z0-9._-]*$',
});

/** Basic auth towards a Prometheus: both halves by reference (a kubernetes.io/basic-auth Secret's keys). */
export const PrometheusBasicAuth = Type.Object(
  { usernameRef: PrometheusSecretRef, passwordRef: PrometheusSecretRef },
  { additionalProperties: false },
);
export type PrometheusBasicAuth = Static<typeof PrometheusBasicAuth>;

/** The cluster's Prometheus for metric analysis (null removes it); no credentials in it. */
export const SetPrometheusRequest = Type.Object(
  {
    url: Type.Union([Type.String({ maxLength: 2048 }), Type.Null()]),
    /** A bearer token by reference (the file holds the token). */
    tokenRef: Type.Optional(Type.Union([PrometheusSecretRef, Type.Null()])),
    /** Basic auth by reference; not together with tokenRef. */
    basicAuth: Type.Optional(Type.Union([PrometheusBasicAuth, Type.Null()])),
    /** A PEM CA bundle by reference that verifies an https url (instead of the system CAs). */
    caRef: Type.Optional(Type.Union([PrometheusSecretRef, Type.Null()])),
  },
  { additionalProperties: false },
);
export type SetPrometheusRequest = Static<typeof SetPrometheusRequest>;

export const ClusterNameParams = Type.Object({ name: Type.String({ maxLength: 253 }) });
export type ClusterNameParams = Static<typeof ClusterNameParams>;
