/**
 * A headless Chromium driven over the DevTools protocol on a pipe (`--remote-debugging-pipe`:
 * NUL-terminated JSON on fds 3 and 4), so dashboard tests need no browser-automation package.
 * Uses Debian's `chromium` when installed (`apt-get install chromium`).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Readable, Writable } from 'node:stream';

export function chromiumPath(): string | undefined {
  return ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome'].find((p) => existsSync(p));
}

interface Pending {
  resolve: (v: unknown) => void;
  reject: (e: Error) => void;
}

export interface Page {
  /** Evaluates an expression in the page (promises awaited) and returns its JSON value. */
  evaluate<T>(expression: string): Promise<T>;
  /** Polls `expression` until it is truthy; fails naming it after `timeoutMs`. */
  waitFor(expression: string, timeoutMs?: number): Promise<void>;
  navigate(url: string): Promise<void>;
  screenshot(): Promise<Buffer>;
}

export interface Browser {
  open(url: string): Promise<Page>;
  close(): Promise<void>;
}

export async function launchChromium(executable: string): Promise<Browser> {
  const profile = mkdtempSync(path.join(os.tmpdir(), 'flotilla-chromium-'));
  const child: ChildProcess = spawn(
    executable,
    [
      '--headless=new',
      '--remote-debugging-pipe',
      '--no-sandbox',
      '--disable-gpu',
      '--no-first-run',
      '--disable-extensions',
      `--user-data-dir=${profile}`,
      'about:blank',
    ],
    { stdio: ['ignore', 'ignore', 'ignore', 'pipe', 'pipe'] },
  );
  const toBrowser = child.stdio[3] as Writable;
  const fromBrowser = child.stdio[4] as Readable;
  const pending = new Map<number, Pending>();
  let nextId = 1;
  let buffer = '';
  fromBrowser.setEncoding('utf8');
  fromBrowser.on('data', (chunk: string) => {
    buffer += chunk;
    let end: number;
    while ((end = buffer.indexOf('\0')) >= 0) {
      const msg = JSON.parse(buffer.slice(0, end)) as { id?: number; result?: unknown; error?: { message: string } };
      buffer = buffer.slice(end + 1);
      const p = msg.id === undefined ? undefined : pending.get(msg.id);
      if (!p) continue;
      pending.delete(msg.id!);
      if (msg.error) p.reject(new Error(`DevTools: ${msg.error.message}`));
      else p.resolve(msg.result);
    }
  });
  const send = <T>(method: string, params: object = {}, sessionId?: string): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      const id = nextId++;
      pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
      toBrowser.write(`${JSON.stringify({ id, method, params, ...(sessionId ? { sessionId } : {}) })}\0`);
    });
  await send('Browser.getVersion');

  return {
    async open(url) {
      const { targetId } = await send<{ targetId: string }>('Target.createTarget', { url: 'about:blank' });
      const { sessionId } = await send<{ sessionId: string }>('Target.attachToTarget', { targetId, flatten: true });
      await send('Page.enable', {}, sessionId);
      await send(
        'Emulation.setDeviceMetricsOverride',
        { width: 1280, height: 900, deviceScaleFactor: 1, mobile: false },
        sessionId,
      );
      const page: Page = {
        async evaluate<T>(expression: string): Promise<T> {
          const r = await send<{
            result: { value?: unknown };
            exceptionDetails?: { text: string; exception?: { description?: string } };
          }>('Runtime.evaluate', { expression, awaitPromise: true, returnByValue: true }, sessionId);
          if (r.exceptionDetails) {
            throw new Error(`${expression}: ${r.exceptionDetails.exception?.description ?? r.exceptionDetails.text}`);
          }
          return r.result.value as T;
        },
        async waitFor(expression, timeoutMs = 20_000) {
          const until = Date.now() + timeoutMs;
          while (!(await page.evaluate<unknown>(`Boolean(${expression})`))) {
            if (Date.now() > until) throw new Error(`timed out waiting for ${expression}`);
            await new Promise((r) => setTimeout(r, 100));
          }
        },
        async navigate(to) {
          await send('Page.navigate', { url: to }, sessionId);
          await page.waitFor(`document.readyState === 'complete' && location.href.startsWith(${JSON.stringify(to)})`);
        },
        async screenshot() {
          const size = await page.evaluate<{ width: number; height: number }>(
            '({ width: document.documentElement.scrollWidth, height: document.documentElement.scrollHeight })',
          );
          const { data } = await send<{ data: string }>(
            'Page.captureScreenshot',
            { format: 'png', captureBeyondViewport: true, clip: { x: 0, y: 0, ...size, scale: 1 } },
            sessionId,
          );
          return Buffer.from(data, 'base64');
        },
      };
      await page.navigate(url);
      return page;
    },
    async close() {
      await send('Browser.close').catch(() => undefined);
      await new Promise<void>((resolve) => {
        if (child.exitCode !== null) resolve();
        else child.once('exit', () => resolve());
        setTimeout(() => {
          child.kill('SIGKILL');
          resolve();
        }, 5000).unref();
      });
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
