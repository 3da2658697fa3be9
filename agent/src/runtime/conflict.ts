import { isKubeStatus } from '../errors.js';

/**
 * Runs a read-modify-write until it does not conflict (client-go's RetryOnConflict with its
 * default of 5 attempts): each attempt must read afresh, so a 409 is answered with the new state.
 */
export async function retryOnConflict<T>(attempt: () => Promise<T>, attempts = 5): Promise<T> {
  for (let i = 1; ; i++) {
    try {
      return await attempt();
    } catch (err) {
      if (i >= attempts || !isKubeStatus(err, 409)) throw err;
    }
  }
}
