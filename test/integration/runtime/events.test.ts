/** The event recorder writing real core/v1 Events, with repeats aggregated into a count. */
import { describe, expect, it } from 'vitest';
import { EventRecorder, kubeEventSink, type KubeObject } from '@flotilla/agent/runtime';
import { eventually, testNamespace } from '../helpers/kube.js';
import { runtimeEnv } from './support.js';

const env = runtimeEnv();

describe('EventRecorder against a real apiserver', () => {
  it('writes events about an object and aggregates repeats', async () => {
    const ns = await testNamespace(env.k, 'events');
    const created = await env.k.core.createNamespacedConfigMap({
      namespace: ns,
      body: { metadata: { name: 'subject' } },
    });
    const subject: KubeObject = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: {
        name: 'subject',
        namespace: ns,
        uid: created.metadata!.uid!,
        resourceVersion: created.metadata!.resourceVersion!,
      },
    };
    const recorder = new EventRecorder({
      sink: kubeEventSink(env.rest),
      component: 'flotilla-agent/test',
      instance: 'agent-0',
      logger: env.logger,
    });
    recorder.event(subject, 'Normal', 'Tested', 'it works');
    recorder.event(subject, 'Normal', 'Tested', 'it works');
    recorder.event(subject, 'Normal', 'Tested', 'it works');
    recorder.event(subject, 'Warning', 'Broken', 'it does not');
    await recorder.flush();

    const events = await eventually('events listed', async () => {
      const list = await env.k.core.listNamespacedEvent({ namespace: ns });
      return list.items.length === 2 && list.items;
    });
    const tested = events.find((e) => e.reason === 'Tested')!;
    expect(tested).toMatchObject({
      type: 'Normal',
      message: 'it works',
      count: 3,
      involvedObject: {
        kind: 'ConfigMap',
        name: 'subject',
        namespace: ns,
        uid: created.metadata!.uid,
        apiVersion: 'v1',
      },
      source: { component: 'flotilla-agent/test', host: 'agent-0' },
      reportingComponent: 'flotilla-agent/test',
      reportingInstance: 'agent-0',
    });
    expect(tested.firstTimestamp).toBeInstanceOf(Date); // the typed client parses what we wrote
    expect(events.find((e) => e.reason === 'Broken')).toMatchObject({ type: 'Warning', count: 1 });
  });
});
