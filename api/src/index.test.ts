import { describe, expect, it } from 'vitest';
import * as api from './index.js';

describe('api package', () => {
  it('loads as an ES module', () => {
    expect(typeof api).toBe('object');
  });
});
