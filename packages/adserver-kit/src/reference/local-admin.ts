import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import Fastify from 'fastify';
import { request } from 'undici';
import type { Store } from '../db.ts';
import { SCOPES, type Scope } from '../schemas.ts';
import { type IssuedKey, issueKey } from './admin.ts';
import * as repo from './repository.ts';

// The console chores (keys, activation) while `serve` runs on an embedded store. PGlite is one
// process's database: a second process opening the same directory would not see the server's
// writes (and the server would not see its). So `serve` opens a loopback-only admin listener,
// writes its address and a fresh secret to `<data-dir>/admin.json` (mode 0600: whoever can read
// the data directory owns the server anyway), and the CLI sends its commands there.

/** File in the data directory naming the running server's admin listener. */
export const ADMIN_FILE = 'admin.json';

/** A listed key: hints only, never the key. */
export interface ListedKey {
  id: string;
  hint: string;
  scopes: string[];
  label: string;
  revoked: boolean;
}

/** What `keys create|list|revoke` and `activate` need, whichever way they reach the store. */
export interface ConsoleOps {
  createKey(scopes: Scope[], label: string): Promise<IssuedKey>;
  listKeys(): Promise<ListedKey[]>;
  revokeKey(id: string): Promise<boolean>;
  activate(orderId: string): Promise<boolean>;
}

/** The console operations straight on a store (PostgreSQL shared with the server, or a stopped server's PGlite). */
export function storeOps(store: Store, accountId: string): ConsoleOps {
  return {
    createKey: (scopes, label) => issueKey(store, accountId, { scopes, label }),
    listKeys: async () =>
      (await repo.listKeys(store, accountId)).map((k) => ({
        id: k.id,
        hint: k.hint,
        scopes: k.scopes,
        label: k.label,
        revoked: k.revoked_at !== null,
      })),
    revokeKey: (id) => repo.revokeKey(store, id, new Date()),
    activate: (orderId) => store.tx((q) => repo.activateOrder(q, orderId)),
  };
}

const sha = (s: string) => createHash('sha256').update(s, 'utf8').digest();

/**
 * Starts the loopback admin listener of a running server and writes `admin.json` into `dataDir`.
 * `close()` stops it and removes the file.
 */
export async function startLocalAdmin(ops: ConsoleOps, dataDir: string): Promise<{ close(): Promise<void> }> {
  const secret = randomBytes(32).toString('base64url');
  const expected = sha(secret);
  const app = Fastify({ logger: false, bodyLimit: 16 * 1024 });
  app.addHook('onRequest', async (req, reply) => {
    const m = /^Bearer ([A-Za-z0-9_-]{1,100})$/.exec(req.headers.authorization ?? '');
    // Compared as SHA-256 digests: equal length, constant time.
    if (!m || !timingSafeEqual(sha(m[1]!), expected))
      return reply.code(401).send({ code: 'unauthorized', message: 'local admin secret required' });
  });
  app.post('/keys', async (req, reply) => {
    const b = (req.body ?? {}) as { scopes?: unknown; label?: unknown };
    const scopes = Array.isArray(b.scopes) ? b.scopes : [...SCOPES];
    const bad = scopes.filter((s) => !SCOPES.includes(s as Scope));
    if (bad.length || typeof (b.label ?? '') !== 'string')
      return reply.code(400).send({
        code: 'bad_request',
        message: `scopes must be among ${SCOPES.join(', ')} and label a string`,
      });
    return reply.code(201).send(await ops.createKey(scopes as Scope[], (b.label as string) ?? ''));
  });
  app.get('/keys', async () => ({ data: await ops.listKeys() }));
  app.post('/keys/:id/revoke', async (req, reply) => {
    const { id } = req.params as { id: string };
    if (await ops.revokeKey(id)) return { revoked: id };
    return reply.code(404).send({ code: 'not_found', message: `no live key ${id}` });
  });
  app.post('/orders/:id/activate', async (req, reply) => {
    const { id } = req.params as { id: string };
    if (await ops.activate(id)) return { live: id };
    return reply.code(404).send({ code: 'not_found', message: `no order ${id}` });
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const addr = app.server.address();
  const port = typeof addr === 'object' && addr ? addr.port : 0;
  const file = path.join(dataDir, ADMIN_FILE);
  writeFileSync(file, JSON.stringify({ url: `http://127.0.0.1:${port}`, secret, pid: process.pid }), {
    mode: 0o600,
  });
  return {
    async close() {
      rmSync(file, { force: true });
      await app.close();
    },
  };
}

/**
 * The console operations through a running server's admin listener, or undefined when no
 * server runs on `dataDir` (no `admin.json`, or a stale one left by a crash: nothing listens).
 */
export async function remoteOps(dataDir: string): Promise<ConsoleOps | undefined> {
  let info: { url: string; secret: string };
  try {
    info = JSON.parse(readFileSync(path.join(dataDir, ADMIN_FILE), 'utf8'));
  } catch {
    return undefined;
  }
  const call = async (method: 'GET' | 'POST', p: string, body?: unknown) => {
    const res = await request(`${info.url}${p}`, {
      method,
      headers: {
        authorization: `Bearer ${info.secret}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(10_000),
    });
    const json = (await res.body.json()) as Record<string, unknown>;
    return { status: res.statusCode, json };
  };
  try {
    await call('GET', '/keys');
  } catch (err) {
    if ((err as { code?: string }).code === 'ECONNREFUSED') return undefined;
    throw err;
  }
  const ok = async (p: Promise<{ status: number; json: Record<string, unknown> }>) => {
    const r = await p;
    if (r.status >= 400 && r.status !== 404) throw new Error(String(r.json.message ?? `HTTP ${r.status}`));
    return r;
  };
  return {
    createKey: async (scopes, label) =>
      (await ok(call('POST', '/keys', { scopes, label }))).json as unknown as IssuedKey,
    listKeys: async () => (await ok(call('GET', '/keys'))).json.data as ListedKey[],
    revokeKey: async (id) =>
      (await ok(call('POST', `/keys/${encodeURIComponent(id)}/revoke`))).status === 200,
    activate: async (orderId) =>
      (await ok(call('POST', `/orders/${encodeURIComponent(orderId)}/activate`))).status === 200,
  };
}
