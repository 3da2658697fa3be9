import { describe, expect, it } from 'vitest';
import { buildCli } from './cli.js';
import type { Flags } from './settings/reader.js';

async function parse(args: string[]): Promise<Flags> {
  let got: Flags | undefined;
  const program = buildCli({
    manager: (flags) => {
      got = flags;
      return Promise.resolve();
    },
  });
  // Subcommands copy these settings only when added later, so set them on each.
  for (const command of [program, ...program.commands]) {
    command.exitOverride();
    command.configureOutput({ writeErr: () => {}, writeOut: () => {} });
  }
  await program.parseAsync(args, { from: 'user' });
  return got!;
}

describe('agent CLI', () => {
  it('hands the webhook flags over like the others', async () => {
    const flags = await parse(['manager', '--webhook-port', '9443', '--webhook-failure-policy', 'Ignore']);
    expect(flags).toMatchObject({ webhookPort: '9443', webhookFailurePolicy: 'Ignore' });
  });

  it('hands `manager` flags over as given', async () => {
    const flags = await parse([
      'manager',
      '--kubeconfig',
      '/k',
      '--cluster-name',
      'c1',
      '--health-port',
      '0',
      '--lease-duration',
      '3s',
      '--no-leader-elect',
    ]);
    expect(flags).toMatchObject({
      kubeconfig: '/k',
      clusterName: 'c1',
      healthPort: '0',
      leaseDuration: '3s',
      leaderElect: false,
    });
  });

  it('hands the hub link flags over', async () => {
    const flags = await parse([
      'manager',
      '--hub-url=http://hub:8080',
      '--bootstrap-token-file=/t',
      '--cluster-labels=env=prod',
      '--namespace=agents',
      '--join-secret=join',
      '--nats-url=nats://n:4222',
    ]);
    expect(flags).toMatchObject({
      hubUrl: 'http://hub:8080',
      bootstrapTokenFile: '/t',
      clusterLabels: 'env=prod',
      namespace: 'agents',
      joinSecret: 'join',
      natsUrl: 'nats://n:4222',
    });
  });

  it('hands the component selection over, and has no other switch for the webhook', async () => {
    expect((await parse(['manager', '--components=*,-webhook'])).components).toBe('*,-webhook');
    await expect(parse(['manager', '--webhook-enabled=false'])).rejects.toMatchObject({
      code: 'commander.unknownOption',
    });
    await expect(parse(['manager', '--controllers=cloneset'])).rejects.toMatchObject({
      code: 'commander.unknownOption',
    });
  });

  it('leaves leader election on by default', async () => {
    expect((await parse(['manager'])).leaderElect).toBe(true);
  });

  it('turns HTTP/2 to the apiserver off with --no-kube-api-http2', async () => {
    expect((await parse(['manager'])).kubeApiHttp2).toBe(true);
    expect((await parse(['manager', '--no-kube-api-http2'])).kubeApiHttp2).toBe(false);
  });

  it('rejects unknown flags and commands', async () => {
    await expect(parse(['manager', '--bogus'])).rejects.toMatchObject({ code: 'commander.unknownOption' });
    await expect(parse(['daemonz'])).rejects.toThrow();
  });
});
