import { describe, expect, it } from 'vitest';
import { selectControllers } from './select.js';

const all = [{ name: 'cloneset' }, { name: 'sidecarset' }, { name: 'webhook' }];
const names = (spec: string[]): string[] => selectControllers(all, spec).map((c) => c.name);

describe('selectControllers', () => {
  it('runs all with *, some by name, and leaves out -name', () => {
    expect(names(['*'])).toEqual(['cloneset', 'sidecarset', 'webhook']);
    expect(names(['cloneset'])).toEqual(['cloneset']);
    expect(names(['*', '-webhook'])).toEqual(['cloneset', 'sidecarset']);
    expect(names([])).toEqual([]);
  });

  it('refuses unknown names, naming them and the known ones', () => {
    expect(() => names(['*', '-clonset'])).toThrow(
      /unknown controller\(s\) clonset; known: cloneset, sidecarset, webhook/,
    );
  });
});
