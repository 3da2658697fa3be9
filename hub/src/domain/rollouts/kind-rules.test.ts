import type { RolloutStrategy } from '@flotilla/api';
import { describe, expect, it } from 'vitest';
import { strategyKindProblems } from './kind-rules.js';

const stepped: RolloutStrategy = {
  waves: [
    { name: 'canary', canarySteps: [{ partition: '50%', pauseSeconds: 5 }] },
    { name: 'rest', canarySteps: [{ partition: 1 }] },
  ],
};

describe('strategyKindProblems', () => {
  it('accepts canary steps on the kinds with a partition', () => {
    for (const kind of ['CloneSet', 'StatefulSet', 'DaemonSet'])
      expect(strategyKindProblems(kind, stepped)).toEqual([]);
  });

  it('refuses canary steps on a kind without a partition, naming each wave that has them', () => {
    const problems = strategyKindProblems('BroadcastJob', stepped);
    expect(problems.map((p) => p.path)).toEqual(['strategy.waves[0].canarySteps', 'strategy.waves[1].canarySteps']);
    expect(problems[0]!.message).toContain('this workload is a BroadcastJob');
  });

  it('lets waves without steps through on any kind', () => {
    const plain: RolloutStrategy = { waves: [{ name: 'all', canarySteps: [] }, { name: 'rest' }] };
    expect(strategyKindProblems('SidecarSet', plain)).toEqual([]);
  });

  it('refuses pre-pull on anything but a CloneSet, unless it is disabled', () => {
    const prePull = (enabled: boolean): RolloutStrategy => ({ waves: [{ name: 'all' }], prePull: { enabled } });
    expect(strategyKindProblems('StatefulSet', prePull(true))).toEqual([
      { path: 'strategy.prePull', message: 'pre-pull applies to CloneSet workloads; this workload is a StatefulSet' },
    ]);
    expect(strategyKindProblems('StatefulSet', prePull(false))).toEqual([]);
    expect(strategyKindProblems('CloneSet', prePull(true))).toEqual([]);
  });
});
