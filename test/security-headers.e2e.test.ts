import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildConsole, closeInTurn, openConsole, signIn } from './console-browser.ts';
import { DB_KIND, type TestApp, testApp } from './helpers.ts';
import { type LoopbackServer, loopbackServer } from './hostile-server.ts';

type Headers = Record<string, string | string[] | number | undefined>;

/** Every HTML page Podium serves that no other site may frame (`/ad/{code}` is framed on purpose). */
const HTML_ROUTES = [
  '/console/',
  '/console/index.html',
  '/docs/',
  '/docs/toplist-api',
  '/docs/search?q=token',
];
const LINK_NOT_FOUND = '/go/no-such-link';

const csp = (h: Headers) => String(h['content-security-policy'] ?? '');
const directive = (h: Headers, name: string) =>
  csp(h)
    .split(';')
    .map((d) => d.trim())
    .find((d) => d.startsWith(`${name} `));

function expectUnframeable(h: Headers, url: string): void {
  expect(directive(h, 'frame-ancestors'), url).toBe("frame-ancestors 'none'");
  expect(h['x-frame-options'], url).toBe('DENY');
  expect(h['x-content-type-options'], url).toBe('nosniff');
}

/**
 * Security headers (issue 58, finding 1): every HTML page, the console's assets, JSON error
 * answers, HSTS only over https, and the frame case in Debian's Chromium.
 */
describe(`security headers (${DB_KIND})`, () => {
  let t: TestApp;
  let browser: Browser;
  let page: Page;
  let base: string;
  let framer: LoopbackServer;
  let consoleDir: string;
  let adminToken: string;

  beforeAll(async () => {
    consoleDir = await buildConsole();
    t = await testApp({}, { consoleDir });
    adminToken = (await t.app.services.access.createAdminToken('headers', ['admin'], null)).token;
    ({ browser, page, base } = await openConsole(t));
    framer = await loopbackServer();
  }, 600_000);
  afterAll(() => closeInTurn(browser, t, framer));

  const get = (url: string, headers: Record<string, string> = {}) => t.app.inject({ url, headers });

  it('sends frame-ancestors none, X-Frame-Options DENY and nosniff on every HTML page', async () => {
    for (const url of HTML_ROUTES) {
      const res = await get(url);
      expect(res.statusCode, url).toBe(200);
      expect(res.headers['content-type'], url).toMatch(/^text\/html/);
      expectUnframeable(res.headers, url);
    }
    const gone = await get(LINK_NOT_FOUND, { accept: 'text/html' });
    expect(gone.statusCode).toBe(404);
    expect(gone.headers['content-type']).toMatch(/^text\/html/);
    expectUnframeable(gone.headers, LINK_NOT_FOUND);
  });

  it('leads the bare address / to the console, under the console’s headers', async () => {
    const root = await get('/');
    expect(root.statusCode).toBe(302);
    expect(root.headers.location).toBe('/console/');
    expectUnframeable(root.headers, '/');
    const landed = await get(String(root.headers.location));
    expect(landed.statusCode).toBe(200);
    expect(landed.body).toContain('<div id="root"');
  });

  it('gives the console a script-src without inline script, a referrer policy and HSTS on an https public URL', async () => {
    const index = await get('/console/');
    const assets = [...index.body.matchAll(/(?:src|href)="(\/console\/assets\/[^"]+)"/g)].map((m) => m[1]!);
    expect(assets.length).toBeGreaterThan(0);
    for (const url of ['/console/', ...assets, '/console/no-such-file.js']) {
      const res = await get(url);
      expect(directive(res.headers, 'script-src'), url).toBe("script-src 'self'");
      expect(directive(res.headers, 'object-src'), url).toBe("object-src 'none'");
      expect(directive(res.headers, 'base-uri'), url).toBe("base-uri 'none'");
      expect(csp(res.headers), url).not.toMatch(/unsafe-inline|unsafe-eval/);
      expectUnframeable(res.headers, url);
      expect(res.headers['referrer-policy'], url).toBe('no-referrer');
      // The tests' public URL is https://podium.test.
      expect(res.headers['strict-transport-security'], url).toBe('max-age=31536000');
    }
  });

  it('the console build holds no inline script or inline handler (the CSP would block them)', async () => {
    const files = readdirSync(consoleDir, { recursive: true })
      .map(String)
      .filter((f) => f.endsWith('.html'));
    expect(files).toEqual(['index.html']);
    for (const f of files) {
      const html = readFileSync(join(consoleDir, f), 'utf8');
      const scripts = [...html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/gi)];
      expect(scripts.length).toBeGreaterThan(0);
      for (const [, attrs, body] of scripts) {
        expect(attrs).toMatch(/\bsrc="/);
        expect(body!.trim()).toBe('');
      }
      expect(html).not.toMatch(/\son[a-z]+=/i);
    }
  });

  it('answers JSON errors with nosniff, the hot routes included', async () => {
    for (const url of [
      '/api/v1/toplists',
      '/api/v1/toplists/by-slug/x',
      '/go/no-such-link',
      '/no-such-route',
      '/api/admin/v1/sites',
    ]) {
      const res = await get(url);
      expect(res.statusCode, url).toBeGreaterThanOrEqual(400);
      expect(res.headers['content-type'], url).toMatch(/^application\/json/);
      expect(res.headers['x-content-type-options'], url).toBe('nosniff');
    }
  });

  it('sends HSTS only over https when the public URL is http', async () => {
    const plain = await testApp({ publicUrl: 'http://127.0.0.1:3000', trustProxy: true }, { consoleDir });
    try {
      const overHttp = await plain.app.inject({ url: '/console/' });
      expect(overHttp.headers['strict-transport-security']).toBeUndefined();
      expectUnframeable(overHttp.headers, '/console/ over http');
      const behindTls = await plain.app.inject({
        url: '/console/',
        headers: { 'x-forwarded-proto': 'https' },
      });
      expect(behindTls.headers['strict-transport-security']).toBe('max-age=31536000');
    } finally {
      await plain.close();
    }
  });

  it('runs the console under its CSP in Chromium without a violation', async () => {
    // Page scripts as text: the test files are compiled without the DOM's types.
    await page.addInitScript({
      content: `window.cspViolations = [];
        document.addEventListener('securitypolicyviolation', (e) =>
          window.cspViolations.push(e.violatedDirective + ' ' + e.blockedURI));`,
    });
    await signIn(page, base, adminToken, '#/toplists', 'Toplists');
    await page.getByRole('link', { name: 'Tracking' }).click();
    await page.getByRole('heading', { name: 'Tracking' }).waitFor();
    // The Tracking screen loads chart.js, its own chunk, under the same policy.
    await page.waitForLoadState('networkidle');
    await page.getByRole('link', { name: 'Ad servers' }).click();
    await page.getByRole('heading', { name: 'Ad servers' }).waitFor();
    const violations = () => page.evaluate<string[]>('window.cspViolations');
    expect(await violations()).toEqual([]);
    // The policy is in force and the listener hears it: an injected inline script is refused.
    await page.evaluate(`{
      const s = document.createElement('script');
      s.textContent = 'window.inlineRan = true';
      document.body.append(s);
    }`);
    await expect.poll(violations).toEqual(['script-src-elem inline']);
    expect(await page.evaluate('window.inlineRan')).toBeUndefined();
  });

  it('refuses to be framed by another origin in Chromium (a text file in the same page does load)', async () => {
    const framed = [...HTML_ROUTES, LINK_NOT_FOUND];
    framer.handle((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end(
        `<!doctype html><title>framer</title>${[...framed, '/docs/llms.txt']
          .map((u) => `<iframe src="${base}${u}"></iframe>`)
          .join('')}`,
      );
    });
    const refusals: string[] = [];
    const framerPage = await page.context().newPage();
    framerPage.on('console', (m) => {
      if (/frame-ancestors/.test(m.text())) refusals.push(m.text());
    });
    await framerPage.goto(`${framer.origin}/`, { waitUntil: 'load' });
    const children = framerPage.mainFrame().childFrames();
    expect(children).toHaveLength(framed.length + 1);
    const loaded = await Promise.all(
      children.map(async (f) => {
        try {
          return await f.evaluate<string>('document.title');
        } catch {
          return null;
        }
      }),
    );
    // Blocked frames hold Chromium's error page, never the framed document.
    expect(children.slice(0, framed.length).map((f) => f.url())).toEqual(
      framed.map(() => 'chrome-error://chromewebdata/'),
    );
    expect(children[framed.length]!.url()).toBe(`${base}/docs/llms.txt`);
    expect(loaded.slice(0, framed.length)).not.toContain('Podium console');
    expect(refusals.length).toBeGreaterThanOrEqual(framed.length);
    await framerPage.close();
  });
});
