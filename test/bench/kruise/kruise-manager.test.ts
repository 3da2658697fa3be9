import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { kruiseTool, readVersions } from '../../env/src/index.js';
import { checkKruiseDist, givenKruiseDist, webhookConfigurations } from './kruise-manager.js';

const source = mkdtempSync(path.join(os.tmpdir(), 'kruise-src-'));
afterAll(() => rmSync(source, { recursive: true, force: true }));
mkdirSync(path.join(source, 'config/webhook'), { recursive: true });
writeFileSync(
  path.join(source, 'config/webhook/manifests.yaml'),
  `---
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata:
  name: mutating-webhook-configuration
webhooks:
- name: mpod.kb.io
  clientConfig:
    service: { name: webhook-service, namespace: system, path: /mutate-pod }
  failurePolicy: Fail
- name: mcloneset.kb.io
  clientConfig:
    service: { name: webhook-service, namespace: system, path: /mutate-apps-kruise-io-v1alpha1-cloneset }
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata:
  name: validating-webhook-configuration
webhooks:
- name: vpod.kb.io
  clientConfig:
    service: { name: webhook-service, namespace: system, path: /validate-pod }
`,
);
writeFileSync(
  path.join(source, 'config/webhook/patch_manifests.yaml'),
  `apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata:
  name: mutating-webhook-configuration
webhooks:
- name: mpod.kb.io
  namespaceSelector:
    matchExpressions: [{ key: control-plane, operator: DoesNotExist }]
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata:
  name: validating-webhook-configuration
webhooks:
- name: vpod.kb.io
  objectSelector:
    matchExpressions: [{ key: policy.kruise.io/delete-protection, operator: Exists }]
`,
);

describe('webhookConfigurations', () => {
  const [mutating, validating] = webhookConfigurations(source);

  it('names them as the kustomization does', () => {
    expect(mutating?.metadata.name).toBe('kruise-mutating-webhook-configuration');
    expect(validating?.metadata.name).toBe('kruise-validating-webhook-configuration');
  });

  it('merges the patch into the webhook of the same name and leaves the others', () => {
    expect(mutating?.webhooks).toEqual([
      {
        name: 'mpod.kb.io',
        clientConfig: { service: { name: 'webhook-service', namespace: 'system', path: '/mutate-pod' } },
        failurePolicy: 'Fail',
        namespaceSelector: { matchExpressions: [{ key: 'control-plane', operator: 'DoesNotExist' }] },
      },
      {
        name: 'mcloneset.kb.io',
        clientConfig: {
          service: { name: 'webhook-service', namespace: 'system', path: '/mutate-apps-kruise-io-v1alpha1-cloneset' },
        },
      },
    ]);
    expect(validating?.webhooks?.[0]).toMatchObject({
      objectSelector: { matchExpressions: [{ key: 'policy.kruise.io/delete-protection', operator: 'Exists' }] },
    });
  });
});

describe('checkKruiseDist', () => {
  it('names the missing binary', () => {
    expect(() => checkKruiseDist({ binary: path.join(source, 'nope'), source })).toThrow(
      `kruise-manager: finding the binary failed: ${path.join(source, 'nope')} does not exist`,
    );
  });

  it('names the missing manifests folder', () => {
    const binary = path.join(source, 'kruise-manager');
    writeFileSync(binary, 'binary');
    expect(() => checkKruiseDist({ binary, source })).toThrow(
      `finding its manifests failed: ${path.join(source, 'config/crd/bases')} does not exist`,
    );
    mkdirSync(path.join(source, 'config/crd/bases'), { recursive: true });
    expect(checkKruiseDist({ binary, source }).sha256).toMatch(/^[0-9a-f]{64}$/);
  });
});

describe('givenKruiseDist', () => {
  it('means the built one when neither flag is given', () => {
    expect(givenKruiseDist(undefined, undefined)).toBeUndefined();
    expect(givenKruiseDist('', '')).toBeUndefined();
  });

  it('takes both as absolute paths', () => {
    expect(givenKruiseDist('bin/kruise-manager', '/src/kruise')).toEqual({
      binary: path.resolve('bin/kruise-manager'),
      source: '/src/kruise',
    });
  });

  it('refuses one without the other, naming the one given', () => {
    expect(() => givenKruiseDist('/bin/kruise-manager', undefined)).toThrow(/go together; got only --kruise-manager/);
    expect(() => givenKruiseDist(undefined, '/src/kruise')).toThrow(/go together; got only --kruise-src/);
  });
});

describe('kruiseTool', () => {
  it('reads the pinned version and both h1 hashes whole from versions.env', () => {
    const v = readVersions();
    expect(v.KRUISE_VERSION).toMatch(/^v\d+\.\d+\.\d+$/);
    expect(v.KRUISE_SUM).toMatch(/^h1:[A-Za-z0-9+/]{43}=$/);
    expect(v.KRUISE_GOMOD_SUM).toMatch(/^h1:[A-Za-z0-9+/]{43}=$/);
  });

  it('lays the binary and the manifests out in a folder keyed by version, as build-tools.sh does', () => {
    const saved = process.env.FLOTILLA_TOOLS_DIR;
    process.env.FLOTILLA_TOOLS_DIR = '/cache/tools';
    try {
      expect(kruiseTool({ ...readVersions(), KRUISE_VERSION: 'v9.8.7' })).toEqual({
        version: 'v9.8.7',
        binary: '/cache/tools/kruise-v9.8.7/bin/kruise-manager',
        manifests: '/cache/tools/kruise-v9.8.7',
      });
    } finally {
      if (saved === undefined) delete process.env.FLOTILLA_TOOLS_DIR;
      else process.env.FLOTILLA_TOOLS_DIR = saved;
    }
  });
});
