/**
 * The webhook's runnable, on every replica:
 *
 * 1. waits for its caches, so no pod is admitted without the SidecarSets it should get;
 * 2. syncs the certificates (creating the CA and serving certificate on first start; the server
 *    starts serving as soon as a certificate exists, and the CA bundle is published);
 * 3. syncs again every interval, sooner while a rotation is under way or waits, and backs off
 *    after failures;
 * 4. on stop, closes the server (and the admission thread).
 */
import { sleep } from '@flotilla/api';
import type { Logger } from 'pino';
import type { ComponentRunnable } from '../runtime/component.js';
import type { Informer } from '../runtime/informer.js';
import type { AdmissionServer } from './admission-server.js';
import type { CertManager } from './certs/manager.js';
import type { RotationStep } from './certs/rotation.js';
import type { AdmissionThread } from './thread/host.js';

/** Pause before the next sync after `step`: soon while something is under way, at `untilMs` when waiting. */
export function delayAfterSync(step: RotationStep, intervalMs: number, now: number): number {
  if (step.action === 'wait') return Math.max(100, Math.min(intervalMs, step.untilMs - now));
  return step.action === 'none' ? intervalMs : Math.min(intervalMs, 1000);
}

/** Pause after `failures` failed syncs in a row: 1 s, doubling up to 32 s, never past the interval. */
export function delayAfterFailures(failures: number, intervalMs: number): number {
  return Math.min(intervalMs, 500 * 2 ** Math.min(failures, 6));
}

export interface CertSyncDeps {
  certs: CertManager;
  server: AdmissionServer;
  thread: AdmissionThread | undefined;
  informers: readonly Pick<Informer<never>, 'waitForSync'>[];
  syncIntervalMs: number;
  logger: Logger;
}

export function certSyncRunnable(deps: CertSyncDeps): ComponentRunnable {
  const { certs, server, thread, syncIntervalMs, logger } = deps;
  return {
    name: 'webhook',
    async start(signal) {
      thread?.start();
      await Promise.all(deps.informers.map((i) => i.waitForSync(signal))).catch(() => undefined);
      let failures = 0;
      while (!signal.aborted) {
        let delay: number;
        try {
          delay = delayAfterSync(await certs.sync(), syncIntervalMs, Date.now());
          failures = 0;
        } catch (err) {
          delay = delayAfterFailures(++failures, syncIntervalMs);
          logger.error({ err, retryInMs: delay }, 'webhook certificate sync failed');
        }
        await sleep(delay, { signal });
      }
      await server.close();
      await thread?.stop();
    },
  };
}
