import { describe, expect, it } from 'vitest';
import { KubeApiError } from '../errors.js';
import { retryOnConflict } from './conflict.js';

describe('retryOnConflict', () => {
  const conflict = (): KubeApiError => new KubeApiError(409, 'conflict');

  it('runs the read-modify-write again after a 409, up to 5 attempts', async () => {
    let calls = 0;
    await expect(
      retryOnConflict(() => (++calls < 3 ? Promise.reject(conflict()) : Promise.resolve('written'))),
    ).resolves.toBe('written');
    expect(calls).toBe(3);
    calls = 0;
    await expect(retryOnConflict(() => (calls++, Promise.reject(conflict())))).rejects.toMatchObject({ status: 409 });
    expect(calls).toBe(5);
  });

  it('gives up at once on any other failure', async () => {
    let calls = 0;
    await expect(
      retryOnConflict(() => (calls++, Promise.reject(new KubeApiError(404, 'not found')))),
    ).rejects.toMatchObject({ status: 404 });
    expect(calls).toBe(1);
  });
});
