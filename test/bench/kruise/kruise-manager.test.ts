import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { checkKruiseDist, webhookConfigurations } from './kruise-manager.js';

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

  it('names the missing part of the source tree', () => {
    const binary = path.join(source, 'kruise-manager');
    writeFileSync(binary, 'binary');
    expect(() => checkKruiseDist({ binary, source })).toThrow(
      `finding the source tree failed: ${path.join(source, 'config/crd/bases')} does not exist`,
    );
    mkdirSync(path.join(source, 'config/crd/bases'), { recursive: true });
    expect(checkKruiseDist({ binary, source }).sha256).toMatch(/^[0-9a-f]{64}$/);
  });
});
