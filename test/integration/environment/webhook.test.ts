import https from 'node:https';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { issueServingCert } from '@flotilla/test';
import { cluster } from '../helpers/context.js';
import { eventually, kube, simplePod, testNamespace } from '../helpers/kube.js';

interface Review {
  request: { uid: string; kind: { kind: string }; object: { metadata?: { name?: string } } };
}

describe('admission webhooks', () => {
  const k = kube(cluster(0));
  const servers: https.Server[] = [];
  afterAll(() => servers.forEach((s) => s.close()));

  it('calls a mutating webhook served by the test over https on 127.0.0.1', async () => {
    const pki = inject('pki');
    const tls = await issueServingCert(
      pki,
      `webhook-${process.pid}`,
      ['IP:127.0.0.1', 'DNS:localhost'],
      mkdtempSync(path.join(os.tmpdir(), 'wh-')),
    );
    const seen: string[] = [];
    const server = https.createServer({ cert: tls.certPem, key: tls.keyPem }, (req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        const review = JSON.parse(body) as Review;
        seen.push(review.request.object.metadata?.name ?? '');
        const patch = [{ op: 'add', path: '/metadata/labels/mutated-by', value: 'test-webhook' }];
        res.setHeader('Content-Type', 'application/json');
        res.end(
          JSON.stringify({
            apiVersion: 'admission.k8s.io/v1',
            kind: 'AdmissionReview',
            response: {
              uid: review.request.uid,
              allowed: true,
              patchType: 'JSONPatch',
              patch: Buffer.from(JSON.stringify(patch)).toString('base64'),
            },
          }),
        );
      });
    });
    servers.push(server);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as AddressInfo).port;

    const ns = await testNamespace(k, 'webhook');
    const name = `flotilla-test-${ns}`;
    await k.admission.createMutatingWebhookConfiguration({
      body: {
        metadata: { name },
        webhooks: [
          {
            name: 'label.test.flotilla.io',
            admissionReviewVersions: ['v1'],
            sideEffects: 'None',
            failurePolicy: 'Fail',
            clientConfig: {
              url: `https://127.0.0.1:${port}/mutate`,
              caBundle: Buffer.from(pki.caPem).toString('base64'),
            },
            namespaceSelector: { matchLabels: { 'flotilla.test/ns': ns } },
            rules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['pods'] }],
          },
        ],
      },
    });
    try {
      // Webhook configurations take effect asynchronously; probe with dry-run creates.
      await eventually('webhook active', async () => {
        const p = await k.core.createNamespacedPod({
          namespace: ns,
          body: simplePod('probe', 'registry.local/app:v1'),
          dryRun: 'All',
        });
        return p.metadata?.labels?.['mutated-by'] === 'test-webhook';
      });
      const created = await k.core.createNamespacedPod({
        namespace: ns,
        body: simplePod('real', 'registry.local/app:v1'),
      });
      expect(created.metadata?.labels?.['mutated-by']).toBe('test-webhook');
      expect(seen).toContain('real');
    } finally {
      await k.admission.deleteMutatingWebhookConfiguration({ name });
    }
  });
});
