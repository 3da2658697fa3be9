/** Finding a workload by the name an operator types (the REST API addresses workloads by id). */
import type { Workload } from '@flotilla/api';
import { listAll, seg, type HubClient } from '../client.js';
import { CliError } from '../errors.js';
import { parseWorkloadRef, workloadTitle } from '../manifest.js';

/** The workload `ref` names (see parseWorkloadRef); not found or ambiguous names are errors. */
export async function resolveWorkload(client: HubClient, ref: string): Promise<Workload> {
  const r = parseWorkloadRef(ref);
  if (r.id) return client.request<Workload>('GET', `/workloads/${seg(r.id)}`);
  const all = await listAll<Workload>(client, '/workloads', { kind: r.kind, namespace: r.namespace });
  const matches = all.filter((w) => w.name === r.name);
  if (matches.length === 0) throw new CliError('CLI_ERR_NOT_FOUND', `workload ${ref} not found on ${client.baseUrl}`);
  if (matches.length > 1) {
    throw new CliError(
      'CLI_ERR_AMBIGUOUS',
      `workload ${ref} is ambiguous: ${matches.map((w) => workloadTitle(w)).join(', ')}; ` +
        'name it as KIND/NAMESPACE/NAME or by id',
    );
  }
  return matches[0]!;
}
