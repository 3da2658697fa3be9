/**
 * The pod annotations OpenKruise writes for SidecarSets, read and written byte-compatibly:
 * `kruise.io/sidecarset-hash` and `-hash-without-image` hold a JSON map from SidecarSet name to
 * {updateTimestamp, hash, sidecarSetName, sidecarList, controllerRevision} (the older plain
 * `name → hash` form is still read), and `kruise.io/sidecarset-injected-list` is "a,b" sorted.
 */
import {
  ANNOTATION_SIDECARSET_HASH,
  ANNOTATION_SIDECARSET_HASH_WITHOUT_IMAGE,
  ANNOTATION_SIDECARSET_INJECTED_LIST,
  quoteGoString,
  type SidecarSet,
} from '@flotilla/api';
import type { KubeObject } from '../../../runtime/kube-object.js';

/** sidecarcontrol.SidecarSetUpgradeSpec. */
export interface SidecarSetUpgradeSpec {
  updateTimestamp?: string;
  hash: string;
  sidecarSetName?: string;
  sidecarList?: string[] | null;
  controllerRevision?: string;
}

export type HashAnnotationKey = typeof ANNOTATION_SIDECARSET_HASH | typeof ANNOTATION_SIDECARSET_HASH_WITHOUT_IMAGE;

/** The per-SidecarSet records of a hash annotation; empty when absent or unreadable. */
export function readUpgradeSpecs(obj: KubeObject, key: HashAnnotationKey): Map<string, SidecarSetUpgradeSpec> {
  const text = obj.metadata?.annotations?.[key];
  const out = new Map<string, SidecarSetUpgradeSpec>();
  if (!text) return out;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return out;
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return out;
  for (const [name, value] of Object.entries(parsed as Record<string, unknown>)) {
    if (typeof value === 'string') out.set(name, { hash: value, sidecarSetName: name });
    else if (typeof value === 'object' && value !== null) out.set(name, value as SidecarSetUpgradeSpec);
  }
  return out;
}

/** Go's json.Marshal of map[string]SidecarSetUpgradeSpec: keys sorted, fields in declaration order. */
export function writeUpgradeSpecs(specs: ReadonlyMap<string, SidecarSetUpgradeSpec>): string {
  const entries = [...specs.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const body = entries.map(([name, s]) => {
    const list = s.sidecarList ? `[${s.sidecarList.map(quoteGoString).join(',')}]` : 'null';
    const fields = [
      `"updateTimestamp":${s.updateTimestamp ? quoteGoString(s.updateTimestamp) : 'null'}`,
      `"hash":${quoteGoString(s.hash)}`,
      `"sidecarSetName":${quoteGoString(s.sidecarSetName ?? '')}`,
      `"sidecarList":${list}`,
      ...(s.controllerRevision ? [`"controllerRevision":${quoteGoString(s.controllerRevision)}`] : []),
    ];
    return `${quoteGoString(name)}:{${fields.join(',')}}`;
  });
  return `{${body.join(',')}}`;
}

/**
 * Parsed hash annotations of cached pods, keyed by their frozen annotations object: an informer's
 * objects never change (an update brings a new object), so a pod's annotation is parsed once, not
 * once per pod per reconcile (the SidecarSet status counts every matched pod each time).
 */
const parsedSpecs = new WeakMap<
  object,
  Partial<Record<HashAnnotationKey, ReadonlyMap<string, SidecarSetUpgradeSpec>>>
>();

/** readUpgradeSpecs for reading only: remembered for frozen (cached) objects. */
function upgradeSpecsOf(obj: KubeObject, key: HashAnnotationKey): ReadonlyMap<string, SidecarSetUpgradeSpec> {
  const annotations = obj.metadata?.annotations;
  if (!annotations || !Object.isFrozen(annotations)) return readUpgradeSpecs(obj, key);
  let parsed = parsedSpecs.get(annotations);
  if (!parsed) parsedSpecs.set(annotations, (parsed = {}));
  return (parsed[key] ??= readUpgradeSpecs(obj, key));
}

/** The hash recorded on the pod for SidecarSet `name` (with images); '' when none. */
export function podSidecarSetHash(pod: KubeObject, name: string): string {
  return upgradeSpecsOf(pod, ANNOTATION_SIDECARSET_HASH).get(name)?.hash ?? '';
}

/** The without-image hash recorded on the pod for SidecarSet `name`; '' when none. */
export function podSidecarSetHashWithoutImage(pod: KubeObject, name: string): string {
  return upgradeSpecsOf(pod, ANNOTATION_SIDECARSET_HASH_WITHOUT_IMAGE).get(name)?.hash ?? '';
}

/** The ControllerRevision the pod's sidecars of SidecarSet `name` came from; '' when unknown. */
export function podControllerRevision(pod: KubeObject, name: string): string {
  return upgradeSpecsOf(pod, ANNOTATION_SIDECARSET_HASH).get(name)?.controllerRevision ?? '';
}

/** The SidecarSet's own hash annotations (set by its defaulting webhook). */
export function sidecarSetHashOf(ss: SidecarSet): string {
  return ss.metadata?.annotations?.[ANNOTATION_SIDECARSET_HASH] ?? '';
}

export function sidecarSetHashWithoutImageOf(ss: SidecarSet): string {
  return ss.metadata?.annotations?.[ANNOTATION_SIDECARSET_HASH_WITHOUT_IMAGE] ?? '';
}

/** Names in `kruise.io/sidecarset-injected-list`. */
export function injectedSidecarSets(pod: KubeObject): Set<string> {
  const text = pod.metadata?.annotations?.[ANNOTATION_SIDECARSET_INJECTED_LIST] ?? '';
  return new Set(text.split(',').filter((s) => s !== ''));
}

/** "a,b" sorted, as OpenKruise writes the injected list. */
export function formatInjectedList(names: Iterable<string>): string {
  return [...new Set(names)].sort().join(',');
}

/** True when the pod carries the SidecarSet's current hash (its sidecars are up to date). */
export function isPodSidecarUpdated(ss: SidecarSet, pod: KubeObject): boolean {
  return sidecarSetHashOf(ss) === podSidecarSetHash(pod, ss.metadata?.name ?? '');
}
