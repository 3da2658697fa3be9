/**
 * The README's main job as CI runs it: the real `npm run demo -- --once`, on two of the run's
 * clusters (FLOTILLA_DEMO_KUBECONFIGS; the CRDs as this run installs them), its hub, NATS cluster and agents scoped to this run's
 * namespaces and label (FLOTILLA_DEMO_SCOPE) so the suites sharing the clusters are untouched.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { AdmissionregistrationV1Api } from '@kubernetes/client-node';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { cluster, kubeConfigOf } from '../helpers/context.js';
import { installCrds } from '../helpers/crds.js';
import { kube } from '../helpers/kube.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const clusters = [cluster(0), cluster(1)];
const id = Math.random().toString(36).slice(2, 8);

/** Runs the command to its end; resolves with its exit code and everything it printed. */
function runDemo(): Promise<{ code: number | null; out: string }> {
  const child = spawn('npm', ['run', 'demo', '--', '--once'], {
    cwd: ROOT,
    env: {
      ...process.env,
      FLOTILLA_DEMO_KUBECONFIGS: clusters.map((c) => `${c.name}=${c.kubeconfigPath}`).join(','),
      FLOTILLA_DEMO_SCOPE: id,
      FLOTILLA_DEMO_DIR: path.join(inject('envDir'), `demo-${id}`),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (b: Buffer) => (out += b.toString()));
  child.stderr.on('data', (b: Buffer) => (out += b.toString()));
  return new Promise((resolve) => child.once('close', (code) => resolve({ code, out })));
}

describe('npm run demo -- --once', () => {
  // With the conversion at the run's server; the demo leaves the CRDs of shared clusters alone.
  beforeAll(async () => {
    for (const c of clusters) await installCrds(kube(c));
  });

  it('injects the sidecar, pre-pulls the image on every node, rolls out, and cleans up', async () => {
    const { code, out } = await runDemo();
    expect(code, out).toBe(0);
    const at = (pattern: RegExp): number => {
      const i = out.search(pattern);
      expect(i, `${String(pattern)} in:\n${out}`).toBeGreaterThanOrEqual(0);
      return i;
    };
    for (const c of clusters) {
      at(new RegExp(`${c.name}: sidecar log-agent injected into 4/4 pods of demo-${id}/web`));
      const pulled = at(new RegExp(`${c.name}: image \\S+/web:1\\.1 pre-pulled on 1/1 nodes`));
      // Pre-pulled before the rollout starts.
      expect(pulled).toBeLessThan(at(/rollout [0-9a-f-]{36}: canary/));
      at(new RegExp(`${c.name}\\s+\\S+/web:1\\.1\\s+4/4 pods updated and ready`));
    }
    at(/rollout Succeeded: every wave reached the target revision/);
    // The run's webhook is gone: nothing of it is left to fail other suites' admissions.
    for (const c of clusters) {
      const admission = kubeConfigOf(c).makeApiClient(AdmissionregistrationV1Api);
      const names = (await admission.listMutatingWebhookConfiguration()).items.map((w) => w.metadata?.name);
      expect(names).not.toContain(`flotilla-test-m-${id}`);
    }
  }, 300_000);
});
