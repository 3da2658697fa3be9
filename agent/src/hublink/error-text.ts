/**
 * One short line for an error in a log. client-node's ApiException messages embed whole
 * response bodies and headers; a retry loop logging those would drown everything else.
 */
export function errorText(err: unknown, max = 300): string {
  const code = (err as { code?: unknown }).code;
  const text = err instanceof Error ? err.message : String(err);
  const firstLine = text.split('\n')[0] ?? '';
  const prefix = typeof code === 'number' ? `HTTP ${code}: ` : '';
  const body = (err as { body?: unknown }).body;
  let reason = '';
  if (typeof body === 'string') {
    try {
      const message = (JSON.parse(body) as { message?: unknown }).message;
      reason = typeof message === 'string' ? message : '';
    } catch {
      reason = '';
    }
  }
  return `${prefix}${firstLine}${reason ? ` (${reason})` : ''}`.slice(0, max);
}
