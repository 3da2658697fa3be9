import { isKubeStatus } from '../errors.js';
import type { KubeRest } from './rest.js';

/**
 * DELETE of `path`, guarded by `uid` when given (a namesake created since is left alone). 404 (gone)
 * and 409 (the precondition failed: what was meant is gone) both mean done.
 */
export async function deleteIfSame(rest: KubeRest, path: string, uid: string | undefined): Promise<void> {
  try {
    await rest.request({
      method: 'DELETE',
      path,
      body: { apiVersion: 'v1', kind: 'DeleteOptions', ...(uid ? { preconditions: { uid } } : {}) },
    });
  } catch (err) {
    if (!isKubeStatus(err, 404) && !isKubeStatus(err, 409)) throw err;
  }
}
