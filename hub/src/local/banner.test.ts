import { describe, expect, it } from 'vitest';
import { agentInstallLine, renderBanner, type BannerInput } from './banner.js';

const base: BannerInput = {
  localUrl: 'http://127.0.0.1:8080',
  agentUrl: 'http://hub.lan:8080',
  dataDir: '/home/ann/.flotilla/hub',
  adminToken: 'flt_secret-token-value',
  adminTokenShownAt: undefined,
  natsCaFile: '/home/ann/.flotilla/hub/nats/tls/ca.crt',
};

describe('renderBanner', () => {
  it('first start: the addresses, the admin token and the join steps', () => {
    const text = renderBanner(base);
    expect(text).toContain('Dashboard:  http://127.0.0.1:8080/ui/');
    expect(text).toContain('API:        http://127.0.0.1:8080/api/v1');
    expect(text).toContain('Admin token (shown only this once');
    expect(text).toContain('    flt_secret-token-value');
    expect(text).toContain('flotilla tokens create first-cluster --role bootstrap');
    expect(text).toContain('flotilla clusters accept <cluster-name>');
    expect(text).toContain(agentInstallLine(base));
  });

  it('later starts never show a token: they say when it was shown and how to replace it', () => {
    const text = renderBanner({ ...base, adminToken: undefined, adminTokenShownAt: '2026-11-28T00:00:00.000Z' });
    expect(text).not.toContain('flt_');
    expect(text).toContain('printed when this data directory first started (2026-11-28T00:00:00.000Z)');
    expect(text).toContain('--new-admin-token');
  });
});

describe('agentInstallLine', () => {
  it('points the chart at the hub, trusts the local NATS CA, and allows plain http', () => {
    const line = agentInstallLine(base).replace(/ \\\n\s+/g, ' ');
    expect(line).toBe(
      'helm install flotilla-agent deploy/charts/flotilla-agent --namespace flotilla-system --create-namespace ' +
        '--set clusterName=<cluster-name> --set hub.url=http://hub.lan:8080 --set hub.insecure=true ' +
        '--set-file hub.natsCaBundle=/home/ann/.flotilla/hub/nats/tls/ca.crt --set hub.bootstrapToken.value=<bootstrap-token>',
    );
  });

  it('an HTTPS hub and a NATS of your own: no insecure flag, no CA file', () => {
    const line = agentInstallLine({ agentUrl: 'https://hub.example', natsCaFile: undefined });
    expect(line).not.toContain('insecure');
    expect(line).not.toContain('natsCaBundle');
  });
});
