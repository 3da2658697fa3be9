import { AgentError } from '../errors.js';

/**
 * Picks the controllers to run from a kube-controller-manager style list: `*` enables all,
 * a name enables one, `-name` disables one. An empty list runs none. Unknown names fail the
 * start naming them, so a typo never silently disables a controller.
 */
export function selectControllers<T extends { name: string }>(all: readonly T[], spec: readonly string[]): T[] {
  const known = new Set(all.map((c) => c.name));
  const unknown = spec.map((s) => s.replace(/^-/, '')).filter((n) => n !== '*' && !known.has(n));
  if (unknown.length > 0) {
    throw new AgentError(
      'AGENT_ERR_CONFIG',
      `--controllers (FLOTILLA_CONTROLLERS): unknown controller(s) ${unknown.join(', ')}; known: ${[...known].join(', ')}`,
    );
  }
  const all_ = spec.includes('*');
  return all.filter((c) => !spec.includes(`-${c.name}`) && (all_ || spec.includes(c.name)));
}
