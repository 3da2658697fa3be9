import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadNatsAuthKeys, type NatsAuthFiles } from './keys.js';
import { createOperatorSetup } from './setup.js';

async function files(over: Partial<Record<keyof NatsAuthFiles, string>> = {}): Promise<NatsAuthFiles> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'flotilla-keys-'));
  const setup = await createOperatorSetup();
  const write = (name: string, content: string): string => {
    writeFileSync(path.join(dir, name), content);
    return path.join(dir, name);
  };
  return {
    credsFile: write('hub.creds', over.credsFile ?? setup.hubCreds),
    systemCredsFile: write('sys.creds', over.systemCredsFile ?? setup.systemCreds),
    operatorSigningKeyFile: write('op.nk', over.operatorSigningKeyFile ?? setup.operatorSigningSeed),
    accountSigningKeyFile: write('acc.nk', over.accountSigningKeyFile ?? setup.accountSigningSeed),
    credentialTtlSeconds: 3600,
  };
}

describe('loadNatsAuthKeys', () => {
  it('reads the signing keys and the accounts of the hub’s two users', async () => {
    const keys = loadNatsAuthKeys(await files());
    expect(keys.operatorSigner.getPublicKey()).toMatch(/^O/);
    expect(keys.userSigner.getPublicKey()).toMatch(/^A/);
    expect(keys.hubAccount).toMatch(/^A/);
    expect(keys.systemAccount).not.toBe(keys.hubAccount);
  });

  it('names the setting of a file of the wrong kind, never its content', async () => {
    const setup = await createOperatorSetup();
    const swapped = await files({ operatorSigningKeyFile: setup.accountSigningSeed });
    expect(() => loadNatsAuthKeys(swapped)).toThrow(
      /FLOTILLA_NATS_OPERATOR_SIGNING_KEY_FILE: .* does not hold an operator seed/,
    );
    try {
      loadNatsAuthKeys(swapped);
    } catch (err) {
      expect(String(err)).not.toContain(setup.accountSigningSeed);
    }
    const notCreds = await files({ credsFile: 'not creds' });
    expect(() => loadNatsAuthKeys(notCreds)).toThrow(/FLOTILLA_NATS_CREDS_FILE/);
    const missing = { ...(await files()), systemCredsFile: '/nonexistent' };
    expect(() => loadNatsAuthKeys(missing)).toThrow(/FLOTILLA_NATS_SYSTEM_CREDS_FILE: cannot read/);
  });
});
