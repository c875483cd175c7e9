// Shared by the console e2e files: the built console and an app serving it, one headless Debian
// Chromium per file, sign-in and close-down.
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Browser, chromium, type Page } from 'playwright-core';
import { build } from 'vite';
import type { Config } from '../src/config.ts';
import { type TestApp, testApp } from './helpers.ts';

// Debian's Chromium only: these suites never download a browser (.ci/run installs the package).
const CHROMIUM = '/usr/bin/chromium';
const SHOTS = 'test-output/console';

/**
 * Builds the console into a directory of this test file's own and returns it (give it to the app
 * as `consoleDir`). Not into `dist/console`: other test files build there too (`npm start`, the
 * release build), and a build empties its directory first, so a page loading meanwhile got no
 * script and every later step of a console test waited out its timeout.
 */
export async function buildConsole(): Promise<string> {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} missing: apt-get install -y chromium`);
  const outDir = mkdtempSync(join(tmpdir(), 'podium-console-'));
  await build({
    configFile: 'console/vite.config.ts',
    logLevel: 'warn',
    build: { outDir, emptyOutDir: true },
  });
  mkdirSync(SHOTS, { recursive: true });
  return outDir;
}

/**
 * Builds the console and starts an app serving it, with a sealing key and outbound calls allowed
 * to servers on loopback: by the test-only switches, or only to the pairs of `loopbackAllow` (the
 * local-only allowance, as `npm start` sets it) when given; `overrides` set more of its config.
 */
export async function consoleApp(
  overrides: Partial<Config> = {},
  loopbackAllow?: string[],
): Promise<TestApp> {
  const consoleDir = await buildConsole();
  return testApp(
    {
      secretKeys: [{ version: 1, key: randomBytes(32) }],
      outboundLoopbackAllow: loopbackAllow ?? [],
      ...overrides,
    },
    loopbackAllow
      ? { consoleDir }
      : { outboundTestOnly: { allowHttp: true, allowAddresses: ['127.0.0.1'] }, consoleDir },
  );
}

export interface ConsoleBrowser {
  browser: Browser;
  page: Page;
  /** The app's origin on loopback. */
  base: string;
  /** A full-page screenshot under test-output/console. */
  shot: (name: string) => Promise<Buffer>;
}

/** Starts the app on loopback (on `port`, or any free one) and opens one Chromium page on it (clipboard allowed). */
export async function openConsole(t: TestApp, height = 800, port = 0): Promise<ConsoleBrowser> {
  await t.app.listen({ host: '127.0.0.1', port });
  const addr = t.app.server.address();
  if (!addr || typeof addr === 'string') throw new Error('no address');
  const base = `http://127.0.0.1:${addr.port}`;
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
  });
  const context = await browser.newContext({ viewport: { width: 1280, height } });
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base });
  const page = await context.newPage();
  // Each step waits on a real browser: generous limits for a shared two-core machine.
  page.setDefaultTimeout(Number(process.env.E2E_TIMEOUT ?? 120_000));
  const shot = (name: string) => page.screenshot({ path: `${SHOTS}/${name}.png`, fullPage: true });
  return { browser, page, base, shot };
}

/** Opens the console at `hash`, signs in with an admin token and waits for the screen's heading. */
export async function signIn(page: Page, base: string, token: string, hash: string, heading: string) {
  await page.goto(`${base}/console/${hash}`);
  await page.getByRole('button', { name: 'Use an admin token instead' }).click();
  await page.getByLabel('Admin token').fill(token);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: heading }).waitFor();
}

/** Closes each in turn, the browser before the app it shows; one that never started is skipped. */
export async function closeInTurn(...all: ({ close(): Promise<unknown> } | undefined)[]): Promise<void> {
  for (const one of all) await one?.close();
}
