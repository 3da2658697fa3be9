import { describe, expect, it } from 'vitest';
import { CONVERTED_CRDS, planConversionClientConfig, type InstalledCrd } from './crd-client-config.js';

const installed = (clientConfig: object, strategy = 'Webhook'): InstalledCrd => ({
  spec: { conversion: { strategy, webhook: { clientConfig } } },
});
const service = { kind: 'service' as const, namespace: 'flotilla-system', name: 'flotilla-webhook-service', port: 443 };

describe('conversion clientConfig of the CRDs', () => {
  it('covers the CRDs OpenKruise v1.9 converts by webhook among ours', () => {
    expect(CONVERTED_CRDS).toEqual([
      'sidecarsets.apps.kruise.io',
      'statefulsets.apps.kruise.io',
      'daemonsets.apps.kruise.io',
    ]);
  });

  it('writes the Service, /convert and the bundle, clearing a URL', () => {
    const patch = planConversionClientConfig(installed({ url: 'https://old/convert' }), service, 'Q0E=');
    expect(patch).toEqual({
      spec: {
        conversion: {
          webhook: {
            clientConfig: {
              service: { namespace: 'flotilla-system', name: 'flotilla-webhook-service', port: 443, path: '/convert' },
              url: null,
              caBundle: 'Q0E=',
            },
            conversionReviewVersions: ['v1', 'v1beta1'],
          },
        },
      },
    });
  });

  it('writes a URL target and clears the Service', () => {
    const patch = planConversionClientConfig(
      installed({ service: { namespace: 'x', name: 'y' } }),
      { kind: 'url', baseUrl: 'https://127.0.0.1:9443/' },
      'Q0E=',
    ) as { spec: { conversion: { webhook: { clientConfig: object } } } };
    expect(patch.spec.conversion.webhook.clientConfig).toEqual({
      url: 'https://127.0.0.1:9443/convert',
      service: null,
      caBundle: 'Q0E=',
    });
  });

  it('writes only the bundle where an installer owns the rest', () => {
    const chart = installed({ service: { namespace: 'a', name: 'b', port: 443, path: '/convert' } });
    const patch = planConversionClientConfig(chart, undefined, 'Q0E=') as {
      spec: { conversion: { webhook: { clientConfig: object } } };
    };
    expect(patch.spec.conversion.webhook.clientConfig).toEqual({ caBundle: 'Q0E=' });
  });

  it('writes nothing when the CRD already calls the agent with this bundle, or converts with None', () => {
    const current = {
      service: { namespace: 'flotilla-system', name: 'flotilla-webhook-service', port: 443, path: '/convert' },
      caBundle: 'Q0E=',
    };
    expect(planConversionClientConfig(installed(current), service, 'Q0E=')).toBeUndefined();
    expect(planConversionClientConfig(installed(current), undefined, 'Q0E=')).toBeUndefined();
    expect(planConversionClientConfig(installed(current), service, 'TkVX')).toBeDefined();
    expect(planConversionClientConfig({ spec: {} }, service, 'Q0E=')).toBeUndefined();
  });
});
