import { describe, expect, it } from 'vitest';
import { buildCli } from '../cli.js';
import { loadConfig } from '../config.js';
import { SettingsReader, type ConfigHost, type Env, type Flags } from '../settings/reader.js';
import { defaultWebhookConfig, WEBHOOK_SETTINGS, webhookConfig } from './config.js';

const host: ConfigHost = { hostname: () => 'node-a', fileExists: () => true, readFile: () => '' };

/** The webhook settings and the problems they have. */
function read(flags: Flags, env: Env = {}, namespace = 'ns') {
  const reader = new SettingsReader(flags, env, host);
  return { config: webhookConfig(reader, namespace), problems: reader.problems };
}

describe('webhook settings', () => {
  it('take a flag over its FLOTILLA_* variable over the default', () => {
    const { config, problems } = read(
      { webhookPort: '9443', webhookFailurePolicy: 'Ignore' },
      { FLOTILLA_WEBHOOK_PORT: '1234', FLOTILLA_WEBHOOK_TIMEOUT_SECONDS: '5' },
      'agents',
    );
    expect(problems).toEqual([]);
    expect(config).toMatchObject({
      port: 9443,
      failurePolicy: 'Ignore',
      timeoutSeconds: 5,
      namespace: 'agents',
      secretName: defaultWebhookConfig('agents').secretName,
    });
  });

  it('turn CRD cascading protection off with deletion protection, as OpenKruise derives its gates', () => {
    expect(read({}, { FLOTILLA_DELETION_PROTECTION_CRD_CASCADING: 'true' }).config).toMatchObject({
      resourcesDeletionProtection: false,
      crdCascadingDeletionProtection: false,
    });
    expect(
      read({ deletionProtection: 'true' }, { FLOTILLA_DELETION_PROTECTION_CRD_CASCADING: 'true' }).config,
    ).toMatchObject({
      resourcesDeletionProtection: true,
      crdCascadingDeletionProtection: true,
    });
  });

  it('name the flag and the variable of every bad value', () => {
    const { problems } = read(
      { webhookTimeoutSeconds: '31', webhookUrl: 'https://h/path', webhookManageConfigurations: 'yes' },
      { FLOTILLA_WEBHOOK_FAILURE_POLICY: 'Maybe', FLOTILLA_WEBHOOK_SERVICE_NAME: 'Not_A_Name' },
    );
    expect(problems).toEqual([
      '--webhook-timeout-seconds (FLOTILLA_WEBHOOK_TIMEOUT_SECONDS): must be an integer 1-30, got "31"',
      '--webhook-failure-policy (FLOTILLA_WEBHOOK_FAILURE_POLICY): must be Fail or Ignore, got "Maybe"',
      '--webhook-url (FLOTILLA_WEBHOOK_URL): must be https://host[:port] without a path, got "https://h/path"',
      '--webhook-service-name (FLOTILLA_WEBHOOK_SERVICE_NAME): must be a DNS name, got "Not_A_Name"',
      '--webhook-manage-configurations (FLOTILLA_WEBHOOK_MANAGE_CONFIGURATIONS): must be true or false, got "yes"',
    ]);
  });

  it('read from the environment alone as before (the Helm chart sets the variables)', () => {
    const { config, problems } = read(
      {},
      {
        FLOTILLA_WEBHOOK_MANAGE_CONFIGURATIONS: 'false',
        FLOTILLA_WEBHOOK_MUTATING_CONFIGURATION: 'm',
        FLOTILLA_SIDECARSET_PATCH_METADATA_DEFAULTS_ALLOWED: 'true',
        FLOTILLA_SIDECARSET_SORT_CONTAINERS_BY_NAME: 'true',
        FLOTILLA_WEBHOOK_URL: 'https://10.0.0.1:9443',
        FLOTILLA_WEBHOOK_THREAD: 'false',
      },
    );
    expect(problems).toEqual([]);
    expect(config).toMatchObject({
      manageConfigurations: false,
      mutatingConfigurationName: 'm',
      patchMetadataDefaultsAllowed: true,
      sortSidecarContainersByName: true,
      url: 'https://10.0.0.1:9443',
      thread: false,
    });
    expect(defaultWebhookConfig('ns').thread, 'admissions have a thread of their own by default').toBe(true);
  });

  it('lower the controllers only beside the admission thread, to a nice value of 0-19', () => {
    expect(defaultWebhookConfig('ns').controllersNice, 'off unless asked').toBe(0);
    expect(read({}, { FLOTILLA_WEBHOOK_CONTROLLERS_NICE: '10' })).toMatchObject({
      config: { controllersNice: 10, thread: true },
      problems: [],
    });
    expect(read({ webhookControllersNice: '20' }).problems).toEqual([
      '--webhook-controllers-nice (FLOTILLA_WEBHOOK_CONTROLLERS_NICE): must be an integer 0-19, got "20"',
    ]);
    expect(read({ webhookControllersNice: '10', webhookThread: 'false' }).problems).toEqual([
      '--webhook-controllers-nice (FLOTILLA_WEBHOOK_CONTROLLERS_NICE): needs the admission thread (--webhook-thread=true); without it admissions run on the thread it would slow down',
    ]);
    expect(read({ webhookControllersNice: '0', webhookThread: 'false' }).problems).toEqual([]);
  });

  it('fail loadConfig with the flag named, and are all listed in `agent manager --help`', () => {
    const flags = { kubeconfig: '/k', clusterName: 'c1', webhookPort: '10250', sidecarsetWhitelistConfigmap: 'wl' };
    expect(loadConfig(flags, {}, host).webhook).toMatchObject({ port: 10250, whitelistConfigMap: 'wl' });
    expect(() => loadConfig({ ...flags, webhookPort: '0' }, {}, host)).toThrow(
      /--webhook-port \(FLOTILLA_WEBHOOK_PORT\): must be an integer 1-65535, got "0"/,
    );
    const help = buildCli({ manager: () => Promise.resolve() })
      .commands.find((cmd) => cmd.name() === 'manager')!
      .helpInformation();
    for (const s of Object.values(WEBHOOK_SETTINGS)) expect(help).toContain(`--${s.flag} `);
  });
});
