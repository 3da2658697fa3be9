/**
 * One short line for an error in a log: the first line of its message, cut at `max` characters.
 * A retry loop logging whole multi-line messages would drown everything else; KubeApiError
 * messages already name the request, status and reason on their first line.
 */
export function errorText(err: unknown, max = 300): string {
  const text = err instanceof Error ? err.message : String(err);
  return (text.split('\n')[0] ?? '').slice(0, max);
}
