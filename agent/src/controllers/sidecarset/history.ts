/**
 * Registers the SidecarSet's current spec as a ControllerRevision (reusing an equal one, bumping
 * its .revision when it is not the newest, counting hash collisions) and truncates the history to
 * revisionHistoryLimit, never deleting revisions pods or the injection strategy still name.
 */
import { isKubeStatus } from '../../errors.js';
import { resourcePath, Resources } from '../../runtime/resource.js';
import { PatchType, type KubeRest } from '../../runtime/rest.js';
import { LABEL_SIDECARSET_CUSTOM_VERSION, type SidecarSet } from '@flotilla/api';
import { podControllerRevision } from './control/annotations.js';
import {
  findInjectionRevision,
  newSidecarSetRevision,
  revisionHasData,
  sidecarSetRevisionData,
  sortRevisions,
} from './revision.js';
import type { ControllerRevision, Pod } from '../../kube/types.js';

const REF = Resources.controllerRevisions;

export interface LatestRevision {
  name: string;
  collisionCount: number;
}

export async function registerLatestRevision(
  rest: KubeRest,
  namespace: string,
  ss: SidecarSet,
  existing: readonly ControllerRevision[],
  pods: readonly Pod[],
): Promise<LatestRevision> {
  const revisions = sortRevisions(existing);
  let collisionCount = ss.status?.collisionCount ?? 0;
  const data = sidecarSetRevisionData(ss);
  const next = (revisions.at(-1)?.revision ?? 0) + 1;
  const equal = revisions.filter((r) => revisionHasData(r, data));
  let latest: ControllerRevision;
  if (equal.length > 0 && equal.at(-1) === revisions.at(-1)) {
    latest = revisions.at(-1)!;
  } else if (equal.length > 0) {
    const reused = equal.at(-1)!;
    await rest.request({
      method: 'PATCH',
      path: resourcePath(REF, namespace, reused.metadata.name),
      body: { revision: next },
      contentType: PatchType.merge,
    });
    latest = { ...reused, revision: next };
    revisions.splice(revisions.indexOf(reused), 1);
    revisions.push(latest);
  } else {
    for (;;) {
      const candidate = newSidecarSetRevision(ss, namespace, next, collisionCount);
      try {
        latest = await rest.request<ControllerRevision>({
          method: 'POST',
          path: resourcePath(REF, namespace),
          body: candidate,
        });
        break;
      } catch (err) {
        if (!isKubeStatus(err, 409)) throw err;
        const found = await rest.request<ControllerRevision>({
          method: 'GET',
          path: resourcePath(REF, namespace, candidate.metadata.name),
        });
        if (revisionHasData(found, data)) {
          latest = found;
          break;
        }
        collisionCount++;
      }
    }
    revisions.push(latest);
  }
  await updateCustomVersionLabel(rest, namespace, ss, latest);
  await truncateHistory(rest, namespace, ss, revisions, pods);
  return { name: latest.metadata.name, collisionCount };
}

/**
 * The SidecarSet's custom version label moves to its latest revision (a relabelled SidecarSet whose
 * spec did not change names the same revision), so injectionStrategy.revision.customVersion finds it.
 */
async function updateCustomVersionLabel(
  rest: KubeRest,
  namespace: string,
  ss: SidecarSet,
  latest: ControllerRevision,
): Promise<void> {
  const version = ss.metadata?.labels?.[LABEL_SIDECARSET_CUSTOM_VERSION];
  if (!version || latest.metadata.labels?.[LABEL_SIDECARSET_CUSTOM_VERSION] === version) return;
  await rest.request({
    method: 'PATCH',
    path: resourcePath(REF, namespace, latest.metadata.name),
    body: { metadata: { labels: { [LABEL_SIDECARSET_CUSTOM_VERSION]: version } } },
    contentType: PatchType.merge,
  });
}

async function truncateHistory(
  rest: KubeRest,
  namespace: string,
  ss: SidecarSet,
  revisions: ControllerRevision[],
  pods: readonly Pod[],
): Promise<void> {
  const limit = Math.max(1, ss.spec.revisionHistoryLimit ?? 10);
  let excess = revisions.length - limit;
  if (excess <= 0) return;
  const active = new Set(pods.map((p) => podControllerRevision(p, ss.metadata?.name ?? '')).filter((n) => n !== ''));
  const info = ss.spec.injectionStrategy?.revision;
  if (info) {
    const named = findInjectionRevision(revisions, info);
    if (named) active.add(named.metadata.name);
  }
  for (const rev of revisions.slice(0, -1)) {
    if (excess <= 0) break;
    if (active.has(rev.metadata.name)) continue;
    try {
      await rest.request({ method: 'DELETE', path: resourcePath(REF, namespace, rev.metadata.name) });
    } catch (err) {
      if (!isKubeStatus(err, 404)) throw err;
    }
    excess--;
  }
}
