/**
 * The `storagemigration` component of `agent manager`, on the leader: a pass of migrate.ts at
 * start, then again every 10 minutes (30 s after a pass that left work), so CRDs applied over a
 * cluster that stored older versions (OpenKruise v1.8/v1.9, earlier Flotilla CRDs) end up listing
 * only their storage version. SidecarSets stored at v1alpha1 are read through the conversion
 * webhook, which the webhook component serves.
 */
import { CRD_DEFINITIONS, sleep } from '@flotilla/api';
import type { AgentConfig } from '../../config.js';
import type { Component } from '../component.js';
import { migrateStorage, promMigrationMetrics } from './migrate.js';

export const MIGRATION_INTERVAL_MS = 10 * 60_000;
export const MIGRATION_RETRY_MS = 30_000;

export const storageMigrationComponent: Component<AgentConfig> = {
  name: 'storagemigration',
  runsOn: 'leader',
  setup(ctx) {
    const deps = {
      rest: ctx.rest,
      events: ctx.events('storagemigration'),
      logger: ctx.logger.child({ component: 'storagemigration' }),
      metrics: promMigrationMetrics(ctx.registry),
      definitions: CRD_DEFINITIONS,
    };
    ctx.run({
      name: 'storagemigration',
      async start(signal) {
        while (!signal.aborted) {
          const done = await migrateStorage(deps);
          await sleep(done ? MIGRATION_INTERVAL_MS : MIGRATION_RETRY_MS, { signal }).catch(() => undefined);
        }
      },
    });
  },
};
