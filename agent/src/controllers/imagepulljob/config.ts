/**
 * The ImagePullJob controller's settings, in the table form of settings/setting.ts.
 *
 * FLOTILLA_IMAGEPULLJOB_SECRET_NAMESPACES: where the controller may read pull secrets. Unset or
 * `*`: every namespace (OpenKruise's behaviour; needs cluster-wide read access to Secrets).
 * Otherwise a comma-separated list, possibly empty: the controller watches Secrets only there (and
 * in the daemon config namespace), so namespaced Roles are all it needs; the Helm chart sets it
 * from imagePullJob.pullSecretNamespaces and grants exactly that.
 *
 * --default-ttlseconds-for-always-nodeimage (OpenKruise v1.9's manager flag, default 300, at most
 * 31 days): the fixed margin added to the TTL of the tags an Always job writes into NodeImages, so
 * the job reads every node's result before the tag goes.
 */
import { int, isDnsLabel, list } from '../../settings/kinds.js';
import type { Kind, SettingsTable } from '../../settings/setting.js';

const namespaceList = list('namespaces', { test: isDnsLabel, what: 'a namespace name' });

/** A list of namespaces; `*` is every namespace (undefined). */
const namespaces: Kind<string[] | undefined> = {
  ...namespaceList,
  parse: (text, problem) => (text === '*' ? undefined : namespaceList.parse(text, problem)),
};

export const IMAGEPULLJOB_SETTINGS = {
  pullSecretNamespaces: {
    env: ['FLOTILLA_IMAGEPULLJOB_SECRET_NAMESPACES'],
    kind: namespaces,
    defaultHelp: 'default *',
    help: 'namespaces where the ImagePullJob controller reads pull secrets: * for every one, else a comma-separated list, possibly empty',
  },
  alwaysNodeImageTtlSeconds: {
    flag: 'default-ttlseconds-for-always-nodeimage',
    env: ['FLOTILLA_IMAGEPULLJOB_NODEIMAGE_TTL_SECONDS'],
    kind: int(0, 2678400, 'a number of seconds 0-2678400'),
    default: 300,
    help: 'seconds added to the NodeImage tag TTL of Always ImagePullJobs (OpenKruise v1.9: 300)',
  },
} satisfies SettingsTable;
