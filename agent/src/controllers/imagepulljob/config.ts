/**
 * The ImagePullJob controller's settings, in the table form of settings/setting.ts.
 *
 * FLOTILLA_IMAGEPULLJOB_SECRET_NAMESPACES: where the controller may read pull secrets. Unset or
 * `*`: every namespace (OpenKruise's behaviour; needs cluster-wide read access to Secrets).
 * Otherwise a comma-separated list, possibly empty: the controller watches Secrets only there (and
 * in the daemon config namespace), so namespaced Roles are all it needs; the Helm chart sets it
 * from imagePullJob.pullSecretNamespaces and grants exactly that.
 */
import { isDnsLabel, list } from '../../settings/kinds.js';
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
} satisfies SettingsTable;
