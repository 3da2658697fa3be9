import { describe, expect, it } from 'vitest';
import { CliError } from './errors.js';
import { age, cell, labelsText, parseOutputFormat, renderData, renderTable } from './output.js';

describe('renderTable', () => {
  it('pads columns to the widest cell, upper-cases headers and trims line ends', () => {
    const rows = [
      { n: 'cluster-a', h: 'Online', m: '' },
      { n: 'b', h: 'Offline', m: 'no heartbeat' },
    ];
    const text = renderTable(
      [
        { header: 'name', value: (r: (typeof rows)[number]) => r.n },
        { header: 'health', value: (r) => r.h },
        { header: 'message', value: (r) => r.m },
      ],
      rows,
    );
    expect(text).toBe(
      'NAME        HEALTH    MESSAGE\n' + 'cluster-a   Online\n' + 'b           Offline   no heartbeat\n',
    );
  });

  it('shows control characters escaped instead of sending them to the terminal', () => {
    expect(cell('a\u001b[31mred\nx')).toBe('a\\x1b[31mred\\x0ax');
    expect(renderTable([{ header: 'x', value: (s: string) => s }], ['\u0007'])).toBe('X\n\\x07\n');
  });
});

describe('formats', () => {
  it('accepts table, json and yaml only', () => {
    expect(parseOutputFormat(undefined)).toBe('table');
    expect(parseOutputFormat('yaml')).toBe('yaml');
    expect(() => parseOutputFormat('xml')).toThrow(CliError);
  });

  it('prints JSON and YAML of the API objects', () => {
    expect(renderData('json', { a: [1] })).toBe('{\n  "a": [\n    1\n  ]\n}\n');
    expect(renderData('yaml', { a: [1], b: 'x' })).toBe('a:\n  - 1\nb: x\n');
  });

  it('ages and labels', () => {
    const now = new Date('2026-01-01T12:00:00Z');
    expect(age(null, now)).toBe('<never>');
    expect(age('2026-01-01T11:59:15Z', now)).toBe('45s');
    expect(age('2026-01-01T11:00:00Z', now)).toBe('60m');
    expect(age('2026-01-01T07:00:00Z', now)).toBe('5h');
    expect(age('2025-12-25T12:00:00Z', now)).toBe('7d');
    expect(labelsText({ z: '1', a: '2' })).toBe('a=2,z=1');
    expect(labelsText({})).toBe('<none>');
  });
});
