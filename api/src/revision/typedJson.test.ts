import { describe, expect, it } from 'vitest';
import { GoDecodeError, encodeGoTyped } from './typedJson.js';
import { roundTripGoTime } from './goTime.js';
import type { GoStructTable } from './goStructTable.js';

describe('encodeGoTyped', () => {
  const table: GoStructTable = {
    'test.Thing': [
      ['name', 'string'],
      ['note', 'string', 'omitempty'],
      ['count', '*int32', 'omitempty'],
      ['tags', '[]string'],
      ['labels', 'map[]string', 'omitempty'],
      ['child', 'test.Child'],
    ],
    'test.Child': [['on', 'bool', 'omitempty']],
  };

  it('writes fields in declaration order with Go zero values', () => {
    expect(encodeGoTyped('test.Thing', { child: null, extra: 1 }, table)).toBe('{"name":"","tags":null,"child":{}}');
  });

  it('keeps a pointer to zero but drops empty omitempty values', () => {
    expect(encodeGoTyped('test.Thing', { count: 0, note: '', labels: {}, tags: [] }, table)).toBe(
      '{"name":"","count":0,"tags":[],"child":{}}',
    );
  });

  it('sorts map keys by UTF-8 bytes', () => {
    expect(encodeGoTyped('test.Thing', { labels: { '😀': 'a', '\uffff': 'b' } }, table)).toContain(
      '"labels":{"\uffff":"b","😀":"a"}',
    );
  });

  it('names the field Go would reject', () => {
    const run = (): string =>
      encodeGoTyped('core.PodTemplateSpec', { spec: { containers: [{ name: 'a' }, { name: 'b', image: 5 }] } });
    expect(run).toThrow(GoDecodeError);
    expect(run).toThrow('spec.containers[1].image: expected string, got number');
  });

  it('names map entries and quantities in errors', () => {
    expect(() => encodeGoTyped('core.ResourceRequirements', { limits: { cpu: 'lots' } })).toThrow(
      /limits\["cpu"\]: invalid quantity "lots"/,
    );
  });

  it('fails loudly on a type the table does not have', () => {
    expect(() => encodeGoTyped('core.Nope', {})).toThrow(/unknown Go type/);
  });
});

describe('roundTripGoTime', () => {
  it.each([
    ['2024-05-01T12:00:00+02:00', '2024-05-01T10:00:00Z'],
    ['2024-05-01T12:00:00.999Z', '2024-05-01T12:00:00Z'],
    ['2024-05-01T12:00:00,5Z', '2024-05-01T12:00:00Z'],
    ['0001-01-01T00:00:00Z', null],
    ['0001-01-01T00:00:00.1Z', '0001-01-01T00:00:00Z'],
    ['0001-01-01T00:30:00+01:00', '0000-12-31T23:30:00Z'],
    ['2024-02-29T00:00:00Z', '2024-02-29T00:00:00Z'],
  ])('%s -> %s', (input, output) => {
    expect(roundTripGoTime(input)).toBe(output);
  });

  it.each([
    'yesterday',
    '2023-02-29T00:00:00Z',
    '2024-05-01T24:00:00Z',
    '2024-05-01t12:00:00z',
    '2024-05-01T12:00:00+24:00',
  ])('rejects %s', (input) => {
    expect(roundTripGoTime(input)).toBeUndefined();
  });
});
