import { describe, expect, it } from 'vitest';
import { createOperatorInstall } from '../nats/auth/setup.js';
import { renderNextSteps, setupFiles, shellQuote } from './nats-setup-files.js';

const options = {
  outDir: '/tmp/nats setup',
  resolverDir: '/data/resolver',
  namespace: 'flotilla',
  natsNamespace: 'nats',
};

describe('setupFiles', () => {
  it("the four hub files under the chart's names, the server fragment, the identity key apart", async () => {
    const install = await createOperatorInstall();
    const files = setupFiles(install, '/data/resolver');
    expect([...files.keys()].sort()).toEqual([
      'hub/account-signing.nk',
      'hub/hub-system.creds',
      'hub/hub.creds',
      'hub/operator-signing.nk',
      'nats-server/flotilla-operator.conf',
      'offline/operator-identity.nk',
    ]);
    expect(files.get('hub/hub.creds')).toBe(install.setup.hubCreds);
    expect(files.get('hub/hub-system.creds')).toBe(install.setup.systemCreds);
    expect(files.get('hub/operator-signing.nk')).toBe(`${install.setup.operatorSigningSeed}\n`);
    expect(files.get('hub/account-signing.nk')).toBe(`${install.setup.accountSigningSeed}\n`);
    expect(files.get('offline/operator-identity.nk')).toBe(`${install.operatorIdentitySeed}\n`);
    expect(install.operatorIdentitySeed).toMatch(/^SO/);
    expect(install.operatorIdentitySeed).not.toBe(install.setup.operatorSigningSeed);
  });

  it('the server fragment: operator, system account, full resolver with deletes, SYS and HUB preloaded', async () => {
    const install = await createOperatorInstall();
    const conf = setupFiles(install, '/data/resolver').get('nats-server/flotilla-operator.conf')!;
    const { setup } = install;
    expect(conf).toContain(`operator: "${setup.operatorJwt}"`);
    expect(conf).toContain(`system_account: ${setup.systemAccount}`);
    expect(conf).toContain('resolver { type: full, dir: "/data/resolver", allow_delete: true, interval: "2m" }');
    expect(conf).toContain(`  ${setup.systemAccount}: "${setup.preload[setup.systemAccount]}"`);
    expect(conf).toContain(`  ${setup.hubAccount}: "${setup.preload[setup.hubAccount]}"`);
    // No key material of any kind in what the servers get.
    expect(conf).not.toMatch(/\bS[OAU][A-Z2-7]{50,}/);
  });
});

describe('renderNextSteps', () => {
  it('kubectl lines for both Secrets with quoted paths, the identity key to move offline', () => {
    const text = renderNextSteps(options);
    expect(text).toContain('kubectl -n flotilla create secret generic flotilla-nats-auth \\');
    for (const name of ['hub.creds', 'hub-system.creds', 'operator-signing.nk', 'account-signing.nk']) {
      expect(text).toContain(`--from-file='${name}=/tmp/nats setup/hub/${name}'`);
    }
    expect(text).toContain('kubectl -n nats create secret generic flotilla-nats-operator \\');
    expect(text).toContain("--from-file='flotilla-operator.conf=/tmp/nats setup/nats-server/flotilla-operator.conf'");
    expect(text).toContain('Move /tmp/nats setup/offline/operator-identity.nk offline now');
    // The identity key is in no Secret.
    expect(text.match(/--from-file=.*operator-identity/)).toBeNull();
  });

  it('never carries key material, creds or JWTs', () => {
    expect(renderNextSteps(options)).not.toMatch(/\bS[OAU][A-Z2-7]{50,}|eyJ|BEGIN/);
  });
});

describe('shellQuote', () => {
  it('leaves plain words alone and single-quotes the rest', () => {
    expect(shellQuote('a=/tmp/x.nk')).toBe('a=/tmp/x.nk');
    expect(shellQuote("/tmp/it's here")).toBe(`'/tmp/it'\\''s here'`);
  });
});
