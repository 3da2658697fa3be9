import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { KubeApiError } from '../errors.js';
import { ConversionHealth, conversionFailureOf } from './conversion-health.js';

const REFUSED = 'Post "https://127.0.0.1:1/convert?timeout=30s": dial tcp 127.0.0.1:1: connect: connection refused';
const listError = (kind = 'SidecarSet'): KubeApiError =>
  new KubeApiError(
    500,
    `GET /apis/apps.kruise.io/v1beta1/sidecarsets: 500 InternalError Internal error occurred: conversion webhook for apps.kruise.io/v1alpha1, Kind=${kind} failed: ${REFUSED}`,
  );

/** A logger whose lines are kept as [level, msg]. */
function recordingLogger(): { logger: pino.Logger; lines: [number, string][] } {
  const lines: [number, string][] = [];
  const logger = pino(
    { level: 'info' },
    {
      write(line: string) {
        const { level, msg } = JSON.parse(line) as { level: number; msg: string };
        lines.push([level, msg]);
      },
    },
  );
  return { logger, lines };
}

describe('conversionFailureOf', () => {
  it('reads the kind, the stored version and the reason from the apiserver error', () => {
    expect(conversionFailureOf(listError())).toEqual({
      kind: 'SidecarSet',
      from: 'apps.kruise.io/v1alpha1',
      reason: REFUSED,
    });
  });

  it('finds it in a cause, and ignores other failures', () => {
    expect(conversionFailureOf(new Error('watch failed', { cause: listError('DaemonSet') }))?.kind).toBe('DaemonSet');
    expect(conversionFailureOf(new KubeApiError(403, 'GET /api/v1/pods: 403 Forbidden'))).toBeUndefined();
    expect(conversionFailureOf('conversion webhook for a/b, Kind=X failed: y')).toBeUndefined();
  });
});

describe('ConversionHealth', () => {
  it('fails readiness naming the kind, logs once, and recovers on the next good read', () => {
    const { logger, lines } = recordingLogger();
    const health = new ConversionHealth(logger);
    expect(health.check()).toBe(true);
    health.readFailed('sidecarsets', new Error('timeout'));
    expect(health.check()).toBe(true);
    health.readFailed('sidecarsets', listError());
    health.readFailed('sidecarsets', listError());
    expect(() => health.check()).toThrow(`cannot read SidecarSet (its conversion webhook failed: ${REFUSED})`);
    expect(lines.filter(([level]) => level === 50)).toHaveLength(1);
    expect(lines[0]![1]).toContain('cannot read SidecarSet: the apiserver cannot convert its objects');
    // Another reader of another kind reading well changes nothing.
    health.readSucceeded('clonesets');
    expect(() => health.check()).toThrow('SidecarSet');
    health.readSucceeded('sidecarsets');
    expect(health.check()).toBe(true);
    expect(lines.at(-1)![1]).toBe('SidecarSet reads again: its conversion webhook answers');
  });

  it('names each failing kind once, whatever the number of its readers', () => {
    const health = new ConversionHealth(pino({ level: 'silent' }));
    health.readFailed('sidecarsets', listError());
    health.readFailed('sidecarsets|ns-a', listError());
    health.readFailed('daemonsets', listError('DaemonSet'));
    expect(health.summary()).toBe(
      `cannot read SidecarSet (its conversion webhook failed: ${REFUSED}); DaemonSet (its conversion webhook failed: ${REFUSED})`,
    );
  });
});
