import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { defaultSidecarSet, sidecarSetHash, sidecarSetHashWithoutImage, type SidecarSet } from '@flotilla/api';
import { ObjectCache } from '../../runtime/cache.js';
import { deepFreeze } from '../../runtime/kube-object.js';
import { injectedSidecarSets, podSidecarSetHash, podControllerRevision } from './control/annotations.js';
import { namespaceInScope, podMatchesSidecarSet, selectorMatches, sidecarSetPodMatcher } from './control/match.js';
import {
  BY_INJECTED_SIDECARSET,
  injectedSidecarSetIndex,
  matchedPods,
  sidecarSetChanged,
  type SidecarSetControllerDeps,
} from './controller.js';
import { injectSidecars } from './inject.js';
import { isPodActive } from '../../kube/pods.js';
import { hasAllSidecars } from './pod-state.js';
import type { Namespace, Pod } from '../../kube/types.js';

function sidecarSet(name: string, spec: Partial<SidecarSet['spec']>): SidecarSet {
  const ss = defaultSidecarSet({
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'SidecarSet',
    metadata: { name },
    spec: { selector: { matchLabels: { app: 'a' } }, containers: [{ name: `${name}-sc`, image: 'sc:v1' }], ...spec },
  });
  ss.metadata!.annotations = {
    'kruise.io/sidecarset-hash': sidecarSetHash(ss),
    'kruise.io/sidecarset-hash-without-image': sidecarSetHashWithoutImage(ss),
  };
  return ss;
}

const plainPod = (name: string, namespace: string, labels: Record<string, string>): Pod => ({
  metadata: { name, namespace, labels },
  spec: { containers: [{ name: 'main', image: 'app:v1' }] },
});

const injected = (pod: Pod, sets: SidecarSet[]): Pod => injectSidecars(pod, sets, '2026-01-01T00:00:00Z').pod as Pod;

/** Deps over plain caches: pods with the controller's index, namespaces for namespaceSelector. */
function depsOf(pods: readonly Pod[], namespaces: readonly Namespace[] = []): SidecarSetControllerDeps {
  const podCache = new ObjectCache<Pod>({ [BY_INJECTED_SIDECARSET]: injectedSidecarSetIndex });
  for (const pod of pods) podCache.upsert(deepFreeze(structuredClone(pod)));
  const nsCache = new ObjectCache<Namespace>();
  for (const ns of namespaces) nsCache.upsert(deepFreeze(structuredClone(ns)));
  return {
    pods: podCache,
    namespaces: nsCache,
  } as unknown as SidecarSetControllerDeps;
}

/** matchedPods as it was before the index: every cached pod, filtered. */
function matchedByScan(deps: SidecarSetControllerDeps, ss: SidecarSet): string[] {
  const name = ss.metadata?.name ?? '';
  return (deps.pods as unknown as ObjectCache<Pod>)
    .list(ss.spec.namespace || undefined)
    .filter((pod) => {
      const ns = pod.metadata.namespace ?? 'default';
      return (
        isPodActive(pod) &&
        namespaceInScope(ss, ns, deps.namespaces.get(undefined, ns)?.metadata.labels) &&
        selectorMatches(ss, pod.metadata.labels) &&
        injectedSidecarSets(pod).has(name) &&
        hasAllSidecars(pod, ss)
      );
    })
    .map((p) => `${p.metadata.namespace}/${p.metadata.name}`)
    .sort();
}

const keys = (pods: readonly Pod[]): string[] => pods.map((p) => `${p.metadata.namespace}/${p.metadata.name}`).sort();

describe('matchedPods', () => {
  const mesh = sidecarSet('mesh', {});
  const other = sidecarSet('other', {});

  it('counts the active pods injected by the SidecarSet that it still selects and that hold its sidecars', () => {
    const done = injected(plainPod('done', 'ns', { app: 'a' }), [mesh]);
    done.status = { phase: 'Succeeded' };
    const relabelled = injected(plainPod('relabelled', 'ns', { app: 'a' }), [mesh]);
    relabelled.metadata.labels = { app: 'b' };
    const stripped = injected(plainPod('stripped', 'ns', { app: 'a' }), [mesh]);
    stripped.spec.containers = stripped.spec.containers.filter((c) => c.name !== 'mesh-sc');
    const deps = depsOf([
      injected(plainPod('both', 'ns', { app: 'a' }), [mesh, other]),
      injected(plainPod('mine', 'ns2', { app: 'a' }), [mesh]),
      injected(plainPod('theirs', 'ns', { app: 'a' }), [other]),
      plainPod('never-injected', 'ns', { app: 'a' }),
      done,
      relabelled,
      stripped,
    ]);
    expect(keys(matchedPods(deps, mesh))).toEqual(['ns/both', 'ns2/mine']);
    expect(keys(matchedPods(deps, other))).toEqual(['ns/both', 'ns/theirs']);
    expect(matchedPods(deps, sidecarSet('unknown', {}))).toEqual([]);
  });

  it('keeps to spec.namespace and spec.namespaceSelector', () => {
    const pods = [
      injected(plainPod('p', 'ns', { app: 'a' }), [mesh]),
      injected(plainPod('q', 'ns2', { app: 'a' }), [mesh]),
    ];
    const namespaces: Namespace[] = [{ metadata: { name: 'ns2', labels: { env: 'prod' } } }];
    expect(keys(matchedPods(depsOf(pods, namespaces), { ...mesh, spec: { ...mesh.spec, namespace: 'ns' } }))).toEqual([
      'ns/p',
    ]);
    const prodOnly = { ...mesh, spec: { ...mesh.spec, namespaceSelector: { matchLabels: { env: 'prod' } } } };
    expect(keys(matchedPods(depsOf(pods, namespaces), prodOnly))).toEqual(['ns2/q']);
  });

  it('finds the same pods as scanning every pod did', () => {
    const names = ['s1', 's2'];
    const setArb = fc.record({
      name: fc.constantFrom(...names),
      app: fc.constantFrom('a', 'b'),
      namespace: fc.constantFrom(undefined, 'n1', 'n2'),
      namespaceEnv: fc.constantFrom(undefined, 'prod', 'dev'),
    });
    const podArb = fc.record({
      namespace: fc.constantFrom('n1', 'n2', 'n3'),
      app: fc.constantFrom('a', 'b'),
      injectedBy: fc.subarray(names),
      relabel: fc.constantFrom(undefined, 'a', 'b'),
      phase: fc.constantFrom(undefined, 'Running', 'Failed'),
      dropSidecar: fc.boolean(),
    });
    fc.assert(
      fc.property(setArb, fc.array(podArb, { maxLength: 12 }), (s, specs) => {
        const ss = sidecarSet(s.name, {
          selector: { matchLabels: { app: s.app } },
          ...(s.namespace ? { namespace: s.namespace } : {}),
          ...(s.namespaceEnv ? { namespaceSelector: { matchLabels: { env: s.namespaceEnv } } } : {}),
        });
        const pods = specs.map((p, i) => {
          const sets = p.injectedBy.map((n) => sidecarSet(n, { selector: { matchLabels: { app: p.app } } }));
          const pod = injected(plainPod(`p${i}`, p.namespace, { app: p.app }), sets);
          if (p.relabel) pod.metadata.labels = { app: p.relabel };
          if (p.phase) pod.status = { phase: p.phase };
          if (p.dropSidecar) pod.spec.containers = pod.spec.containers.slice(1);
          return pod;
        });
        const namespaces: Namespace[] = [
          { metadata: { name: 'n1', labels: { env: 'prod' } } },
          { metadata: { name: 'n2', labels: { env: 'dev' } } },
        ];
        const deps = depsOf(pods, namespaces);
        expect(keys(matchedPods(deps, ss))).toEqual(matchedByScan(deps, ss));
      }),
    );
  });
});

describe('sidecarSetPodMatcher', () => {
  it('decides as podMatchesSidecarSet does', () => {
    const selectorArb = fc.option(
      fc.record({ matchLabels: fc.dictionary(fc.constantFrom('app', 'tier'), fc.constantFrom('a', 'b')) }),
      { nil: undefined },
    );
    fc.assert(
      fc.property(
        selectorArb,
        selectorArb,
        fc.option(fc.constantFrom('n1', 'n2'), { nil: undefined }),
        fc.constantFrom('n1', 'n2'),
        fc.dictionary(fc.constantFrom('app', 'tier'), fc.constantFrom('a', 'b')),
        fc.dictionary(fc.constantFrom('app', 'tier'), fc.constantFrom('a', 'b')),
        (selector, namespaceSelector, namespace, podNamespace, podLabels, namespaceLabels) => {
          const ss = {
            metadata: { name: 's' },
            spec: {
              containers: [],
              ...(selector ? { selector } : {}),
              ...(namespaceSelector ? { namespaceSelector } : {}),
              ...(namespace ? { namespace } : {}),
            },
          } as unknown as SidecarSet;
          const pod = { metadata: { namespace: podNamespace, labels: podLabels } };
          const compiled = sidecarSetPodMatcher(ss, () => namespaceLabels);
          expect(compiled(podNamespace, podLabels)).toBe(podMatchesSidecarSet(ss, pod, namespaceLabels));
        },
      ),
    );
  });
});

describe('hash annotations of cached pods', () => {
  it('are parsed once per frozen annotations object and read afresh from a new or unfrozen one', () => {
    const mesh = sidecarSet('mesh', {});
    const pod = injected(plainPod('p', 'ns', { app: 'a' }), [mesh]);
    const hash = mesh.metadata!.annotations!['kruise.io/sidecarset-hash']!;
    const frozen = deepFreeze(structuredClone(pod));
    expect(podSidecarSetHash(frozen, 'mesh')).toBe(hash);
    expect(podSidecarSetHash(frozen, 'mesh')).toBe(hash);
    expect(podControllerRevision(frozen, 'mesh')).toBe('');

    const text = pod.metadata.annotations!['kruise.io/sidecarset-hash']!;
    const updated = structuredClone(pod);
    updated.metadata.annotations!['kruise.io/sidecarset-hash'] = text.replace(hash, 'newhash');
    expect(podSidecarSetHash(deepFreeze(updated), 'mesh')).toBe('newhash');

    const mutable = structuredClone(pod);
    expect(podSidecarSetHash(mutable, 'mesh')).toBe(hash);
    mutable.metadata.annotations!['kruise.io/sidecarset-hash'] = text.replace(hash, 'edited');
    expect(podSidecarSetHash(mutable, 'mesh')).toBe('edited');
  });
});

describe('sidecarSetChanged', () => {
  const base = sidecarSet('mesh', {});
  base.metadata = { ...base.metadata, generation: 1, resourceVersion: '1', labels: { team: 'x' } };
  const withMeta = (meta: Partial<NonNullable<SidecarSet['metadata']>>): SidecarSet => ({
    ...base,
    metadata: { ...base.metadata, resourceVersion: '2', ...meta },
  });

  it('ignores a status-only update (the controller’s own write)', () => {
    expect(sidecarSetChanged(base, { ...withMeta({}), status: { matchedPods: 3 } } as SidecarSet)).toBe(false);
  });

  it('reconciles a new generation, new labels or annotations, and a deletion', () => {
    expect(sidecarSetChanged(base, withMeta({ generation: 2 }))).toBe(true);
    expect(
      sidecarSetChanged(base, withMeta({ labels: { team: 'x', 'apps.kruise.io/sidecarset-custom-version': 'v2' } })),
    ).toBe(true);
    expect(sidecarSetChanged(base, withMeta({ labels: { team: 'y' } }))).toBe(true);
    expect(sidecarSetChanged(base, withMeta({ annotations: {} }))).toBe(true);
    expect(sidecarSetChanged(base, withMeta({ deletionTimestamp: '2026-01-01T00:00:00Z' }))).toBe(true);
  });
});
