import { randomBytes } from 'node:crypto';
import type { ReferenceServer, ReferenceServerOptions } from '@podium/adserver-kit';
import { testServer } from '../packages/adserver-kit/test/helpers.ts';
import { type Resolver, systemResolver } from '../src/lib/ssrf.ts';
import { type TestApp, testApp } from './helpers.ts';

/** System DNS, except `private.test`, which resolves to a private address. */
const resolver: Resolver = async (host) =>
  host === 'private.test' ? [{ address: '10.0.0.5', family: 4 }] : systemResolver(host);

export type { ReferenceServer };

/** Short outbound limits so hostile-server cases finish fast. */
export const FAST_OUTBOUND = {
  outboundConnectTimeoutMs: 300,
  outboundTimeoutMs: 1000,
  outboundMaxBytes: 1024 * 1024,
};

/** testApp options: a sealing key, and an outbound client that may reach http fixtures on 127.0.0.1 (test-only switches). */
export function adserverAppOptions(fast = true): Parameters<typeof testApp> {
  return [
    { secretKeys: [{ version: 1, key: randomBytes(32) }], ...(fast ? FAST_OUTBOUND : {}) },
    { outboundTestOnly: { allowHttp: true, allowAddresses: ['127.0.0.1'], resolver } },
  ];
}

/** A Podium app set up by `adserverAppOptions`, with an adserver-scoped admin token. */
export async function adserverApp(): Promise<TestApp & { admin: string }> {
  const t = await testApp(...adserverAppOptions());
  const { token } = await t.app.services.catalog.createAdminToken(
    'adserver',
    ['adserver:read', 'adserver:write'],
    null,
  );
  return { ...t, admin: token };
}

/** The reference ad server on loopback (plain HTTP), on its own store. */
export function referenceServer(opts: ReferenceServerOptions = {}): Promise<ReferenceServer> {
  return testServer({ logger: false, ...opts });
}

/** JSON admin call with the test admin token. */
export async function admin(
  t: TestApp & { admin: string },
  method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE',
  url: string,
  payload?: unknown,
  // biome-ignore lint/suspicious/noExplicitAny: response bodies are checked by the assertions
): Promise<{ status: number; body: any; raw: string }> {
  const res = await t.app.inject({
    method,
    url: `/api/admin/v1${url}`,
    headers: { authorization: `Bearer ${t.admin}` },
    ...(payload === undefined ? {} : { payload: payload as object }),
  });
  return { status: res.statusCode, body: res.body ? JSON.parse(res.body) : undefined, raw: res.body };
}
