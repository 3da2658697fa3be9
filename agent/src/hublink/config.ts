/**
 * How `agent manager` joins the fleet and reaches the hub, in the table form of
 * settings/setting.ts. Without --hub-url the agent runs standalone and the other hub settings are
 * not read.
 */
import { bool, dnsSubdomain, httpUrl, labels, matching, text } from '../settings/kinds.js';
import { settingName, type SettingsReader } from '../settings/reader.js';
import type { SettingsTable, ValuesOf } from '../settings/setting.js';

/** The hub link's settings (AgentConfig.hub). */
export interface HubConfig {
  /** Base URL of the hub's REST API, e.g. https://hub.example:8080. */
  url: string;
  /**
   * Presented once to register; not needed after the join Secret holds credentials. Never
   * logged: the config object is never logged as a whole.
   */
  bootstrapToken: string | undefined;
  /** Labels the cluster registers with (placement selects on them). */
  labels: Record<string, string>;
  /** Secret in `namespace` that holds the join state (registration secret, NATS credentials). */
  joinSecret: string;
  /** Overrides the NATS servers from the credentials (a hub behind another address). */
  natsUrl: string | undefined;
  /** PEM of the CA that verifies the hub's HTTPS certificate; the system's CAs when absent. */
  caPem: string | undefined;
  /** PEM of the CA that verifies the NATS servers' certificates; the system's CAs when absent. */
  natsCaPem: string | undefined;
  /** Talk to the hub without verifying it (plain http:// or an unchecked certificate); local use only. */
  insecure: boolean;
}

export const HUB_SETTINGS = {
  url: {
    flag: 'hub-url',
    env: ['FLOTILLA_HUB_URL'],
    kind: httpUrl(),
    help: "the hub's REST API; without it the agent runs standalone",
  },
  bootstrapToken: {
    flag: 'bootstrap-token',
    env: ['FLOTILLA_BOOTSTRAP_TOKEN'],
    kind: text('token'),
    help: 'token to register with the hub, needed until joined',
  },
  bootstrapTokenFile: {
    flag: 'bootstrap-token-file',
    env: ['FLOTILLA_BOOTSTRAP_TOKEN_FILE'],
    kind: text('path'),
    help: 'file holding the bootstrap token',
  },
  labels: {
    flag: 'cluster-labels',
    env: ['FLOTILLA_CLUSTER_LABELS'],
    kind: labels(),
    help: 'labels this cluster registers with',
  },
  joinSecret: {
    flag: 'join-secret',
    env: ['FLOTILLA_JOIN_SECRET'],
    kind: dnsSubdomain('a DNS subdomain (a Secret name)'),
    default: 'flotilla-agent-join',
    help: 'Secret in --namespace holding the join state and NATS credentials',
  },
  natsUrl: {
    flag: 'nats-url',
    env: ['FLOTILLA_NATS_URL'],
    kind: matching(/^(nats|tls|wss?):\/\/[^\s/]+\/?$/, 'nats://host:port (or tls://, ws://, wss://)', 'url'),
    help: 'NATS servers to use instead of those in the credentials',
  },
  caFile: {
    flag: 'hub-ca-file',
    env: ['FLOTILLA_HUB_CA_FILE'],
    kind: text('path'),
    help: "CA (PEM) that verifies the hub's HTTPS certificate; default the system's CAs",
  },
  natsCaFile: {
    flag: 'nats-ca-file',
    env: ['FLOTILLA_NATS_CA_FILE'],
    kind: text('path'),
    help: "CA (PEM) that verifies the NATS servers' certificates; default the system's CAs",
  },
  insecure: {
    flag: 'insecure',
    env: ['FLOTILLA_HUB_INSECURE'],
    kind: bool(),
    default: false,
    help: 'allow a plain http:// hub URL and skip checking its certificate (local use only)',
  },
} satisfies SettingsTable;

/** The hub link settings; undefined without --hub-url (a standalone agent). */
export function hubConfig(read: SettingsReader): HubConfig | undefined {
  if (!read.given(HUB_SETTINGS.url)) return undefined;
  // An invalid URL still has the other hub settings checked, so every problem is named at once.
  const hub = read.read(HUB_SETTINGS);
  return {
    url: hub.url ?? '',
    bootstrapToken: bootstrapToken(read, hub),
    labels: hub.labels ?? {},
    joinSecret: hub.joinSecret,
    natsUrl: hub.natsUrl,
    caPem: readPem(read, HUB_SETTINGS.caFile, hub.caFile),
    natsCaPem: readPem(read, HUB_SETTINGS.natsCaFile, hub.natsCaFile),
    insecure: plainHttpAllowed(read, hub),
  };
}

/** A plain http:// hub is refused unless --insecure says it is meant (a local test hub). */
function plainHttpAllowed(read: SettingsReader, hub: ValuesOf<typeof HUB_SETTINGS>): boolean {
  if (hub.url?.startsWith('http://') && !hub.insecure) {
    read.problem(HUB_SETTINGS.url, 'must be https:// (give --insecure for a plain http:// hub in local use)');
  }
  return hub.insecure;
}

/** A CA file's PEM, read once here so a missing or wrong file fails the start, naming the setting. */
function readPem(
  read: SettingsReader,
  setting: (typeof HUB_SETTINGS)['caFile' | 'natsCaFile'],
  file: string | undefined,
): string | undefined {
  if (file === undefined) return undefined;
  let pem: string;
  try {
    pem = read.host.readFile(file);
  } catch {
    read.problem(setting, `cannot read file ${file}`);
    return undefined;
  }
  if (!pem.includes('-----BEGIN CERTIFICATE-----')) read.problem(setting, `file ${file} holds no PEM certificate`);
  return pem;
}

/** The token, given or read from its file; read once here, so a bad file fails the start, not the join. */
function bootstrapToken(read: SettingsReader, hub: ValuesOf<typeof HUB_SETTINGS>): string | undefined {
  const file = hub.bootstrapTokenFile;
  if (file === undefined) return hub.bootstrapToken;
  const fileSetting = HUB_SETTINGS.bootstrapTokenFile;
  if (hub.bootstrapToken !== undefined) {
    read.problem(fileSetting, `give either ${settingName(HUB_SETTINGS.bootstrapToken)} or a file, not both`);
    return undefined;
  }
  let token: string;
  try {
    token = read.host.readFile(file).trim();
  } catch {
    read.problem(fileSetting, `cannot read file ${file}`);
    return undefined;
  }
  if (token === '') read.problem(fileSetting, `file ${file} is empty`);
  return token === '' ? undefined : token;
}
