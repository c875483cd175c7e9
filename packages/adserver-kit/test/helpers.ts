import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { type ReferenceServer, type ReferenceServerOptions, startReferenceServer } from '../src/index.ts';

/** A reference server on loopback over its own store: in-memory PGlite, or a throwaway schema when DATABASE_URL is set. */
export async function testServer(opts: ReferenceServerOptions = {}): Promise<ReferenceServer> {
  const url = process.env.DATABASE_URL;
  const schema = url ? `ak_${randomBytes(6).toString('hex')}` : undefined;
  const server = await startReferenceServer({ ...opts, store: url ? { url, schema } : {} });
  return {
    ...server,
    async close() {
      await server.close();
      if (url && schema) {
        const c = new pg.Client({ connectionString: url });
        await c.connect();
        await c.query(`DROP SCHEMA "${schema}" CASCADE`).finally(() => c.end());
      }
    },
  };
}

/** A self-signed certificate for 127.0.0.1 and localhost, made with the system's openssl. */
export function selfSignedCert(): { key: string; cert: string } {
  const dir = mkdtempSync(path.join(tmpdir(), 'adk-tls-'));
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-days',
      '2',
      '-subj',
      '/CN=localhost',
      '-addext',
      'subjectAltName=IP:127.0.0.1,DNS:localhost',
      '-keyout',
      path.join(dir, 'key.pem'),
      '-out',
      path.join(dir, 'cert.pem'),
    ],
    { stdio: 'ignore' },
  );
  return {
    key: readFileSync(path.join(dir, 'key.pem'), 'utf8'),
    cert: readFileSync(path.join(dir, 'cert.pem'), 'utf8'),
  };
}

/** Calls the API with JSON and returns status, headers and parsed body. */
export async function call(
  base: string,
  key: string | undefined,
  method: 'GET' | 'POST',
  p: string,
  body?: unknown,
  headers: Record<string, string> = {},
  // biome-ignore lint/suspicious/noExplicitAny: test bodies are arbitrary JSON, checked by the assertions
): Promise<{ status: number; headers: Headers; body: any }> {
  const res = await fetch(base + p, {
    method,
    headers: {
      ...(key ? { authorization: `Bearer ${key}` } : {}),
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      ...headers,
    },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : undefined };
}
