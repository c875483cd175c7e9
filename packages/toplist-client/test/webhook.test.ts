import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { mintSecret, signatureHeaders } from '../../../src/modules/webhooks/signing.ts';
import { PodiumWebhookError, verifyWebhook } from '../src/index.ts';

const body = JSON.stringify({
  type: 'toplist.published',
  timestamp: '2026-11-23T16:00:00+00:00',
  data: {
    toplistId: 7,
    siteId: 1,
    slug: 'best-casinos-se',
    templateId: 3,
    geo: { geo_type: 'country', code: 'SE' },
    version: '4',
    liveFrom: null,
    liveUntil: null,
  },
});

async function rejects(p: Promise<unknown>, code: string): Promise<void> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(PodiumWebhookError);
  expect((err as PodiumWebhookError).code).toBe(code);
}

// The client's verifier against the reference library and against the headers the server sends.
describe('verifyWebhook', () => {
  const secret = mintSecret();
  const now = new Date();

  it("verifies what the standardwebhooks library signs, and what Podium's sender signs", async () => {
    const msgId = 'msg_01JDX0000000000000000000AB';
    const lib = new Webhook(secret).sign(msgId, now, body);
    const headers = {
      'webhook-id': msgId,
      'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
      'webhook-signature': lib,
    };
    expect(await verifyWebhook(secret, headers, body)).toEqual(JSON.parse(body));
    const ours = signatureHeaders(msgId, now, body, [secret]);
    expect(ours['webhook-signature']).toBe(lib);
    // A fetch Headers object and raw bytes work too (edge runtimes).
    expect(await verifyWebhook(secret, new Headers(ours), new TextEncoder().encode(body))).toMatchObject({
      type: 'toplist.published',
    });
    // And the library accepts what verifyWebhook accepts.
    expect(new Webhook(secret).verify(body, ours)).toEqual(JSON.parse(body));
  });

  it('accepts either secret while both sign (rotation) and a list of secrets on the receiving side', async () => {
    const old = mintSecret();
    const headers = signatureHeaders('msg_1', now, body, [secret, old]);
    expect(headers['webhook-signature']!.split(' ')).toHaveLength(2);
    await expect(verifyWebhook(old, headers, body)).resolves.toMatchObject({ type: 'toplist.published' });
    await expect(verifyWebhook(secret, headers, body)).resolves.toMatchObject({ type: 'toplist.published' });
    const onlyNew = signatureHeaders('msg_2', now, body, [secret]);
    await expect(verifyWebhook([old, secret], onlyNew, body)).resolves.toMatchObject({
      type: 'toplist.published',
    });
    await rejects(verifyWebhook(old, onlyNew, body), 'webhook_signature_mismatch');
  });

  it('refuses a tampered body, a wrong secret, a replay, missing headers and a bad secret', async () => {
    const headers = signatureHeaders('msg_3', now, body, [secret]);
    await rejects(verifyWebhook(secret, headers, body.replace('"4"', '"5"')), 'webhook_signature_mismatch');
    await rejects(verifyWebhook(mintSecret(), headers, body), 'webhook_signature_mismatch');
    await rejects(
      verifyWebhook(secret, { ...headers, 'webhook-id': 'msg_other' }, body),
      'webhook_signature_mismatch',
    );
    await rejects(
      verifyWebhook(secret, headers, body, { now: now.getTime() + 301_000 }),
      'webhook_timestamp_out_of_range',
    );
    await rejects(
      verifyWebhook(secret, headers, body, { now: now.getTime() - 301_000 }),
      'webhook_timestamp_out_of_range',
    );
    await expect(
      verifyWebhook(secret, headers, body, { now: now.getTime() + 290_000 }),
    ).resolves.toBeTruthy();
    await rejects(
      verifyWebhook(secret, { ...headers, 'webhook-timestamp': '1e9' }, body),
      'webhook_timestamp_out_of_range',
    );
    const { 'webhook-signature': _s, ...unsigned } = headers;
    await rejects(verifyWebhook(secret, unsigned, body), 'webhook_headers_missing');
    await rejects(
      verifyWebhook(secret, { ...headers, 'webhook-signature': 'v2,abc' }, body),
      'webhook_signature_mismatch',
    );
    await rejects(verifyWebhook('whsec_%%%', headers, body), 'webhook_invalid_secret');
    await rejects(verifyWebhook('whsec_', headers, body), 'webhook_invalid_secret');
  });
});
