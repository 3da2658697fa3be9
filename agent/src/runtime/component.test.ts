import { pino } from 'pino';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { KubeApiError } from '../errors.js';
import { selectComponents, setupComponents, type Component, type ComponentBase } from './component.js';
import type { Runnable } from './manager.js';
import { Resources } from './resource.js';
import type { KubeRequest, KubeRest } from './rest.js';

describe('selectComponents', () => {
  const all = [{ name: 'cloneset' }, { name: 'sidecarset' }, { name: 'webhook' }];
  const names = (spec: string[]): string[] => selectComponents(all, spec, '--components').map((c) => c.name);

  it('selects all with *, some by name, and leaves out -name', () => {
    expect(names(['*'])).toEqual(['cloneset', 'sidecarset', 'webhook']);
    expect(names(['cloneset'])).toEqual(['cloneset']);
    expect(names(['*', '-webhook'])).toEqual(['cloneset', 'sidecarset']);
    expect(names([])).toEqual([]);
  });

  it('refuses unknown names, naming the setting, them and the known ones', () => {
    expect(() => names(['*', '-clonset'])).toThrow(
      '--components: unknown component(s) clonset; known: cloneset, sidecarset, webhook',
    );
  });
});

describe('setupComponents', () => {
  /** An apiserver that serves only CloneSets among the Kruise kinds. */
  const rest: KubeRest = {
    request<T>(req: KubeRequest): Promise<T> {
      if (req.path === '/apis/apps.kruise.io/v1alpha1')
        return Promise.resolve({ resources: [{ name: 'clonesets' }] } as T);
      return Promise.reject(new KubeApiError(404, 'not found'));
    },
  };

  function base(added: Runnable[], lines: string[]): ComponentBase<{ tag: string }> {
    const manager = {
      informer: () => {
        throw new Error('not used');
      },
      controller: () => {
        throw new Error('not used');
      },
      addReadinessCheck: () => undefined,
      add: (r: Runnable) => added.push(r),
    };
    const logger = pino({ level: 'info' }, { write: (line: string) => lines.push(line) });
    return { manager, rest, config: { tag: 'cfg' }, logger, registry: new Registry(), events: () => ({}) as never };
  }

  it('sets components up in order, placing their runnables as runsOn says', async () => {
    const seen: string[] = [];
    const added: Runnable[] = [];
    const component = (name: string, runsOn: 'leader' | 'every-replica'): Component<{ tag: string }> => ({
      name,
      runsOn,
      setup(ctx) {
        seen.push(`${name}:${ctx.config.tag}`);
        ctx.run({ name: `${name}-loop`, start: () => undefined });
      },
    });
    await setupComponents([component('a', 'leader'), component('b', 'every-replica')], base(added, []));
    expect(seen).toEqual(['a:cfg', 'b:cfg']);
    expect(added.map((r) => [r.name, r.needLeaderElection])).toEqual([
      ['a-loop', true],
      ['b-loop', false],
    ]);
  });

  it('skips a component whose required resources are not served, with a warning naming them', async () => {
    const seen: string[] = [];
    const lines: string[] = [];
    const component = (name: string, requires: Component<unknown>['requires']): Component<unknown> => ({
      name,
      runsOn: 'leader',
      requires,
      setup: () => void seen.push(name),
    });
    await setupComponents(
      [
        component('cloneset', [Resources.cloneSets]),
        component('imagepulljob', [Resources.imagePullJobs, Resources.nodeImages]),
      ],
      base([], lines),
    );
    expect(seen).toEqual(['cloneset']);
    const warnings = lines.map((l) => JSON.parse(l) as { level: number; msg: string }).filter((l) => l.level === 40);
    expect(warnings.map((w) => w.msg)).toEqual([
      'ImagePullJob (apps.kruise.io/v1alpha1), NodeImage (apps.kruise.io/v1alpha1) not served (CRD not installed); imagepulljob disabled',
    ]);
  });
});
