import { describe, expect, it } from 'vitest';
import { computeResource, evaluateResourceExpr, formatMilli, parseQuantityMilli } from './resources-expr.js';

const q = (text: string): { milli: bigint; format: 'DecimalSI' | 'BinarySI' } => {
  const parsed = parseQuantityMilli(text);
  if (!parsed) throw new Error(text);
  return parsed;
};

describe('resourcesPolicy expressions', () => {
  it('computes OpenKruise e2e Story 5 (sum of 200m/400Mi + 400m/600Mi limits, 100m/200Mi + 200m/300Mi requests)', () => {
    expect(computeResource('cpu*50%+100m', q('600m'))).toBe('400m');
    expect(computeResource('max(memory*20%+100Mi,200Mi)', q('1000Mi'))).toBe('300Mi');
    expect(computeResource('cpu*30%+50m', q('300m'))).toBe('140m');
    expect(computeResource('memory*15%+50Mi', q('500Mi'))).toBe('125Mi');
  });

  it('reads plain numbers as cores or bytes and writes canonical quantities', () => {
    expect(computeResource('cpu / 2', q('3'))).toBe('1500m');
    expect(computeResource('0.5', q('1'))).toBe('500m');
    expect(computeResource('min(memory, 1024)', q('2Gi'))).toBe('1024');
    expect(computeResource('(cpu + 1) * 2', q('1'))).toBe('4');
    expect(formatMilli(q('1.5Gi').milli, 'BinarySI')).toBe('1536Mi');
    expect(formatMilli(2000_000n, 'BinarySI')).toBe('2000');
    expect(formatMilli(1000_000n, 'BinarySI')).toBe('1k');
  });

  it('fails as OpenKruise does on bad expressions', () => {
    const one = { cpu: { number: 1 } };
    expect(() => evaluateResourceExpr('cpu/0', one)).toThrow('division by zero');
    expect(() => evaluateResourceExpr('100m*200m', one)).toThrow('multiplication of two quantities');
    expect(() => evaluateResourceExpr('2/100m', one)).toThrow('division by quantity');
    expect(() => evaluateResourceExpr('100m-200m', one)).toThrow('calculation result is negative');
    expect(() => evaluateResourceExpr('avg(cpu, 1)', one)).toThrow('unknown function: avg');
    expect(() => evaluateResourceExpr('gpu*2', one)).toThrow('undefined variable: gpu');
    expect(() => evaluateResourceExpr('cpu*', one)).toThrow('syntax error');
    expect(() => evaluateResourceExpr('(cpu', one)).toThrow('syntax error');
  });
});
