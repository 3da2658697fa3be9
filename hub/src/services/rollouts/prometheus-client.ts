/**
 * How the hub asks a cluster's Prometheus for metric analysis (docs/adr/0017): what it needs —
 * a bearer token or basic auth, and a CA bundle for https — is read by reference from the hub's
 * FLOTILLA_PROMETHEUS_SECRETS_DIR at each measurement (a rotated Secret applies at once), then
 * one instant query goes out over node:http(s), which takes a CA per request where fetch does
 * not. Every failure becomes the reason there is no value; errors name references, never what
 * the files hold.
 */
import { readFile } from 'node:fs/promises';
import http from 'node:http';
import https from 'node:https';
import path from 'node:path';
import { valueOf, type QueryAnswer } from '../../domain/rollouts/analysis-run.js';
import type { ClusterPrometheus } from '../../repositories/analysis-repo.js';

/** What a request to one Prometheus carries, read from the referenced files. */
export interface PrometheusAccess {
  authorization?: string;
  /** PEM bundle that verifies an https Prometheus instead of the system CAs. */
  ca?: string;
}

/** An answer larger than this is not a single value: refused rather than buffered. */
const MAX_BODY_BYTES = 1024 * 1024;

const DIR_ENV = 'FLOTILLA_PROMETHEUS_SECRETS_DIR';

/**
 * The access a cluster's Prometheus needs, or why it cannot be had. Values are trimmed of
 * surrounding whitespace as Prometheus itself does for its *_file settings.
 */
export async function accessOf(
  prom: ClusterPrometheus,
  dir: string | undefined,
): Promise<PrometheusAccess | { error: string }> {
  const refs: [string, string][] = [];
  if (prom.tokenRef !== undefined) refs.push(['token', prom.tokenRef]);
  if (prom.basicAuth !== undefined) {
    refs.push(['basic-auth username', prom.basicAuth.usernameRef], ['basic-auth password', prom.basicAuth.passwordRef]);
  }
  if (prom.caRef !== undefined) refs.push(['CA bundle', prom.caRef]);
  if (refs.length === 0) return {};
  if (dir === undefined) return { error: `${refs[0]![0]} "${refs[0]![1]}" given, but ${DIR_ENV} is not set` };
  const values = new Map<string, string>();
  for (const [what, ref] of refs) {
    try {
      values.set(what, (await readFile(path.join(dir, ref), 'utf8')).trim());
    } catch {
      return { error: `${what} "${ref}" is not readable in ${DIR_ENV}` };
    }
  }
  const access: PrometheusAccess = {};
  const token = values.get('token');
  if (token !== undefined) access.authorization = `Bearer ${token}`;
  const username = values.get('basic-auth username');
  if (username !== undefined) {
    // RFC 7617: the user-id cannot contain a colon, the first one separates it from the password.
    if (username.includes(':')) return { error: `basic-auth username "${prom.basicAuth!.usernameRef}" contains ":"` };
    const pair = `${username}:${values.get('basic-auth password')!}`;
    access.authorization = `Basic ${Buffer.from(pair, 'utf8').toString('base64')}`;
  }
  const ca = values.get('CA bundle');
  if (ca !== undefined) access.ca = ca;
  return access;
}

/** One instant query at the moment of asking, within timeoutMs. */
export function instantQuery(
  baseUrl: string,
  access: PrometheusAccess,
  query: string,
  timeoutMs: number,
): Promise<QueryAnswer> {
  const url = new URL(`${baseUrl.replace(/\/+$/, '')}/api/v1/query`);
  url.searchParams.set('query', query);
  const headers: Record<string, string> = { accept: 'application/json' };
  if (access.authorization !== undefined) headers.authorization = access.authorization;
  const tls = url.protocol === 'https:';
  return new Promise((resolve) => {
    let timer: NodeJS.Timeout | undefined = undefined;
    const settle = (answer: QueryAnswer) => {
      clearTimeout(timer);
      resolve(answer);
    };
    const onResponse = (res: http.IncomingMessage) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > MAX_BODY_BYTES) req.destroy(new Error(`answer larger than ${MAX_BODY_BYTES} bytes`));
        else chunks.push(chunk);
      });
      res.on('error', (err) => settle({ error: `Prometheus answer broken off: ${err.message}` }));
      res.on('end', () => {
        if (res.statusCode === 401 || res.statusCode === 403) {
          settle({ error: `Prometheus refused the credentials (HTTP ${res.statusCode})` });
          return;
        }
        try {
          // Prometheus answers a bad query with 400 and a JSON error, which valueOf reports.
          settle(valueOf(JSON.parse(Buffer.concat(chunks).toString('utf8'))));
        } catch {
          settle({ error: `Prometheus answered HTTP ${res.statusCode} without JSON` });
        }
      });
    };
    const req = tls
      ? https.get(url, { headers, ...(access.ca !== undefined ? { ca: access.ca } : {}) }, onResponse)
      : http.get(url, { headers }, onResponse);
    req.on('error', (err) => settle({ error: `Prometheus unreachable: ${err.message}` }));
    timer = setTimeout(() => req.destroy(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
  });
}
