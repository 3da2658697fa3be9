import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DASHBOARD_CSP, dashboardRoutes } from './static.js';

const app = Fastify();

beforeAll(async () => {
  await dashboardRoutes(app);
});

afterAll(async () => {
  await app.close();
});

describe('dashboard static files', () => {
  it('redirects / and /ui to /ui/', async () => {
    for (const url of ['/', '/ui']) {
      const res = await app.inject({ url });
      expect(res.statusCode).toBe(302);
      expect(res.headers.location).toBe('/ui/');
    }
  });

  it('serves each file with its content type, the CSP, nosniff and revalidation', async () => {
    const types: Record<string, string> = {
      '/ui/': 'text/html; charset=utf-8',
      '/ui/app.js': 'text/javascript; charset=utf-8',
      '/ui/render.js': 'text/javascript; charset=utf-8',
      '/ui/sse.js': 'text/javascript; charset=utf-8',
      '/ui/style.css': 'text/css; charset=utf-8',
    };
    for (const [url, type] of Object.entries(types)) {
      const res = await app.inject({ url });
      expect(res.statusCode, url).toBe(200);
      expect(res.headers['content-type']).toBe(type);
      expect(res.headers['content-security-policy']).toBe(DASHBOARD_CSP);
      expect(res.headers['x-content-type-options']).toBe('nosniff');
      expect(res.headers['cache-control']).toBe('no-cache');
      const again = await app.inject({ url, headers: { 'if-none-match': String(res.headers.etag) } });
      expect(again.statusCode).toBe(304);
    }
    expect(DASHBOARD_CSP).toContain("script-src 'self'");
    expect(DASHBOARD_CSP).not.toContain('unsafe-inline');
  });

  it('serves nothing outside its list of files', async () => {
    for (const url of ['/ui/../package.json', '/ui/%2e%2e%2fstatic.ts', '/ui/static.ts', '/ui/render.test.ts']) {
      expect((await app.inject({ url })).statusCode, url).toBe(404);
    }
  });

  it('never echoes the query string of a missing file (it may hold a token)', async () => {
    const res = await app.inject({ url: '/ui/missing.js?token=flt_secret-value' });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ error: { code: 'HUB_ERR_NOT_FOUND', message: '/ui/missing.js not found' } });
  });

  it('the page loads its code from files only: no inline script, style or handler', async () => {
    const html = (await app.inject({ url: '/ui/' })).body;
    expect(html).toContain('<script type="module" src="app.js"></script>');
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    expect(html).not.toMatch(/\son[a-z]+=/i);
    expect(html).not.toMatch(/<style|style="/i);
  });
});
