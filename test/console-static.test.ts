import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, testApp } from './helpers.ts';

// The console's routes when it has not been built (a checkout before `npm run build`).
describe('console without a build', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await testApp({}, { consoleDir: mkdtempSync(join(tmpdir(), 'podium-no-console-')) });
  });
  afterAll(() => t.close());

  it('answers 503 saying how to build it, with the security headers; the root still leads there', async () => {
    const res = await t.app.inject({ url: '/console/index.html' });
    expect(res.statusCode).toBe(503);
    expect(res.json()).toMatchObject({
      code: 'service_unavailable',
      message: 'The console is not built: run `npm run build`',
    });
    expect(res.headers['x-frame-options']).toBe('DENY');
    const root = await t.app.inject({ url: '/' });
    expect(root.statusCode).toBe(302);
    expect(root.headers.location).toBe('/console/');
  });
});
