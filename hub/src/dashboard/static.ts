/**
 * Serves the dashboard's static files at /ui/ (and redirects / there). The files are public:
 * they hold no data, and every request the page makes goes to /api/v1 with the bearer token the
 * operator pasted, so the API's auth is unchanged. Each response carries a strict Content
 * Security Policy (scripts, styles and requests only from this origin, no inline code, no
 * framing), nosniff, and an ETag with `no-cache` so browsers revalidate after an upgrade.
 */
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';

export const DASHBOARD_PREFIX = '/ui/';

/** The page's policy: same-origin scripts, styles and fetches; nothing inline, embedded or framed. */
export const DASHBOARD_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "connect-src 'self'",
  "img-src 'self' data:",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const CONTENT_TYPES: Record<string, string> = {
  'index.html': 'text/html; charset=utf-8',
  'app.js': 'text/javascript; charset=utf-8',
  'render.js': 'text/javascript; charset=utf-8',
  'sse.js': 'text/javascript; charset=utf-8',
  'style.css': 'text/css; charset=utf-8',
};

/**
 * The folder the files are read from: `hub/src/dashboard/public` both from the sources and from
 * `dist/` (the build does not copy HTML and CSS), so the files are served as written.
 */
export const DASHBOARD_DIR = fileURLToPath(new URL('../../src/dashboard/public/', import.meta.url));

interface Asset {
  body: Buffer;
  type: string;
  etag: string;
}

async function loadAssets(dir: string): Promise<Map<string, Asset>> {
  const assets = new Map<string, Asset>();
  for (const [name, type] of Object.entries(CONTENT_TYPES)) {
    const body = await readFile(`${dir}${name}`);
    const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"`;
    assets.set(name, { body, type, etag });
  }
  return assets;
}

const SECURITY_HEADERS = {
  'content-security-policy': DASHBOARD_CSP,
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'cross-origin-opener-policy': 'same-origin',
};

/** Registers GET /, /ui and /ui/* on the app (files read once, at registration). */
export async function dashboardRoutes(app: FastifyInstance, dir = DASHBOARD_DIR): Promise<void> {
  const assets = await loadAssets(dir);
  const hide = { schema: { hide: true } };
  app.get('/', hide, (_request, reply) => reply.redirect(DASHBOARD_PREFIX));
  app.get('/ui', hide, (_request, reply) => reply.redirect(DASHBOARD_PREFIX));
  app.get<{ Params: { file?: string } }>(`${DASHBOARD_PREFIX}:file`, hide, (request, reply) => {
    const asset = assets.get(request.params.file || 'index.html');
    if (!asset) {
      // The path only: a query string may carry a token (`?token=` is refused, never echoed).
      const path = request.url.split('?')[0];
      return reply.status(404).send({ error: { code: 'HUB_ERR_NOT_FOUND', message: `${path} not found` } });
    }
    void reply.headers({ ...SECURITY_HEADERS, 'cache-control': 'no-cache', etag: asset.etag });
    if (request.headers['if-none-match'] === asset.etag) return reply.status(304).send();
    return reply.type(asset.type).send(asset.body);
  });
}
