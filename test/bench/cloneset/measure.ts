// What the CloneSet benches share: the phase helpers every phase is measured with (CPU from
// /proc, settle() before a phase, polling until a condition holds), the CloneSet they scale and
// how the agent is started. bench.ts measures the agent alone, ../kruise/bench.ts beside
// kruise-manager, with the same instrument.
import { spawnSync } from 'node:child_process';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import v8 from 'node:v8';
import vm from 'node:vm';
import { parseAllDocuments } from 'yaml';
import type { CloneSet } from '@flotilla/api';
import { resourcePath, Resources } from '../../../agent/src/runtime/resource.js';
import { PatchType, type KubeRest, type KubeRestClient } from '../../../agent/src/runtime/rest.js';
import { agentImageRuntime } from '../agent-image.js';

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Clock ticks per second of /proc/<pid>/stat's CPU times. */
export const CLOCK_TICKS = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim()) || 100;

/** User plus system CPU seconds a process has used so far (0 when it is gone). */
export function cpuSeconds(pid: number | undefined): number {
  if (pid === undefined) return 0;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name, in parentheses, may contain spaces: count fields after it.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
  } catch {
    return 0;
  }
}

/** Polls `check` every `everyMs` until it holds; throws naming `what` after `timeoutMs`. */
export async function until(what: string, check: () => Promise<boolean> | boolean, timeoutMs = 600_000, everyMs = 100) {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(everyMs);
  }
}

/** Server-side applies every CRD of the YAML files (one or more documents each) in `dir`. */
export async function applyCrds(rest: KubeRest, dir: string): Promise<void> {
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.yaml'))) {
    for (const doc of parseAllDocuments(readFileSync(path.join(dir, file), 'utf8'))) {
      const crd = doc.toJS() as { metadata: { name: string } } | null;
      if (!crd) continue;
      await rest.request({
        method: 'PATCH',
        path: `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${crd.metadata.name}`,
        query: { fieldManager: 'flotilla-bench', force: true },
        contentType: PatchType.apply,
        body: crd,
      });
    }
  }
}

/** Applies Flotilla's CRDs (deploy/crds under `root`) and waits until CloneSets are served. */
export async function installCrds(rest: KubeRest, root: string): Promise<void> {
  await applyCrds(rest, path.join(root, 'deploy/crds'));
  await until('CloneSets served', async () => {
    try {
      await rest.request({ method: 'GET', path: resourcePath(Resources.cloneSets, 'default') });
      return true;
    } catch {
      return false;
    }
  });
}

/** Creates a namespace and returns its name. */
export async function namespace(rest: KubeRest, name: string): Promise<string> {
  await rest.request({ method: 'POST', path: '/api/v1/namespaces', body: { metadata: { name } } });
  return name;
}

/** The bench's own full garbage collection (v8's `gc`, exposed at run time). */
v8.setFlagsFromString('--expose-gc');
const collectBenchGarbage = vm.runInNewContext('gc') as () => void;

/**
 * Starts every phase from the same state: the trailing work of the phase before (pod deletions,
 * kwok, the garbage collector) has ended — the control plane used less than a tenth of a core
 * over half a second —, the apiserver has just run a full garbage collection
 * (`/debug/pprof/heap?gc=1`), and so has the bench. Go collects when the heap has doubled since
 * the last collection, and a cycle costs the apiserver 0.4 s of CPU on its 250 MB heap (several
 * times its CPU for 100 pods); without this, which phase a cycle landed in, and how far the heap
 * had grown by then, was chance. The bench collects its own garbage (the lists of 1,000 pods it
 * polls until they run) so that none of it is collected on the agent's core during a phase; the
 * scale-up's `timeline` records the bench's GC time.
 */
export async function settle(rest: KubeRestClient, controlPlane: () => number): Promise<void> {
  const deadline = Date.now() + 30_000;
  let last = controlPlane();
  while (Date.now() < deadline) {
    await sleep(500);
    const now = controlPlane();
    const quiet = now - last < 0.05;
    last = now;
    if (quiet) break;
  }
  await (
    await rest.stream({ method: 'GET', path: '/debug/pprof/heap', query: { gc: 1 } }, () => {})
  ).done;
  collectBenchGarbage();
}

/** A CloneSet of `replicas` pods that updates in place, all at once (maxUnavailable 100 %). */
export function cloneSet(name: string, replicas: number, extra: Partial<CloneSet['spec']> = {}): CloneSet {
  return {
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'CloneSet',
    metadata: { name },
    spec: {
      replicas,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: { containers: [{ name: 'main', image: 'registry.local/app:v1' }] },
      },
      updateStrategy: { type: 'InPlaceIfPossible', maxUnavailable: '100%' },
      ...extra,
    },
  };
}

/** The status of a CloneSet, zeros before its controller wrote one. */
export async function status(rest: KubeRest, ns: string, name: string): Promise<NonNullable<CloneSet['status']>> {
  const cs = await rest.request<CloneSet>({ method: 'GET', path: resourcePath(Resources.cloneSets, ns, name) });
  return (
    cs.status ?? { replicas: 0, readyReplicas: 0, availableReplicas: 0, updatedReplicas: 0, updatedReadyReplicas: 0 }
  );
}

/**
 * The agent from its build output (production-like memory) when `tsc -b agent` emitted it now;
 * tsc emits despite type errors elsewhere in the tree, which the result then notes. Else tsx.
 */
export function agentCommand(root: string): { args: string[]; runtime: string } {
  const startedAt = Date.now();
  const typecheck = spawnSync('npx', ['tsc', '-b', 'agent'], { cwd: root, stdio: 'ignore' }).status === 0;
  const main = path.join(root, 'agent/dist/main.js');
  const emitted = typecheck || (statSync(main, { throwIfNoEntry: false })?.mtimeMs ?? 0) >= startedAt - 1000;
  const note = typecheck ? '' : ', tree had type errors';
  if (emitted) {
    // What the image runs (agent/scripts/bundle.mjs over the fresh dist), when it bundles.
    const { script } = agentImageRuntime(root);
    const bundled =
      spawnSync(process.execPath, ['agent/scripts/bundle.mjs'], { cwd: root, stdio: 'ignore' }).status === 0;
    if (bundled)
      return { args: [path.join(root, script)], runtime: `node (${path.dirname(script)}, as the image${note})` };
    return { args: [main], runtime: `node (agent/dist, not bundled${note})` };
  }
  return {
    args: ['--conditions=@flotilla/source', '--import', 'tsx', 'agent/src/main.ts'],
    runtime: 'node + tsx (sources)',
  };
}

/** A merge patch of CloneSet `name`: a new image (an in-place update) or a new replica count. */
export async function patchCloneSet(
  rest: KubeRest,
  ns: string,
  name: string,
  change: { image: string } | { replicas: number },
): Promise<void> {
  const spec =
    'image' in change
      ? { template: { spec: { containers: [{ name: 'main', image: change.image }] } } }
      : { replicas: change.replicas };
  await rest.request({
    method: 'PATCH',
    path: resourcePath(Resources.cloneSets, ns, name),
    contentType: PatchType.merge,
    body: { spec },
  });
}
