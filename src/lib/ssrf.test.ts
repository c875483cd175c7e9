import { describe, expect, it } from 'vitest';
import {
  allowSet,
  checkAddress,
  checkEndpoint,
  guardedLookup,
  normaliseAddress,
  parseLoopbackPair,
} from './ssrf.ts';

const BLOCKED = [
  '0.0.0.0',
  '127.0.0.1',
  '127.255.255.254',
  '10.0.0.1',
  '172.16.5.4',
  '172.31.255.255',
  '192.168.0.1',
  '169.254.169.254',
  '169.254.170.2',
  '100.64.0.1',
  '100.100.100.200',
  '192.0.0.192',
  '198.18.0.1',
  '224.0.0.1',
  '255.255.255.255',
  '240.0.0.1',
  '::',
  '::1',
  '::ffff:127.0.0.1',
  '::ffff:7f00:1',
  '::ffff:10.0.0.1',
  '::127.0.0.1',
  '::ffff:0:7f00:1',
  '64:ff9b::7f00:1',
  '64:ff9b::a9fe:a9fe',
  '64:ff9b:1::a00:1',
  '2002:7f00:1::',
  '2002:a9fe:a9fe::1',
  '2001:0:4136:e378:8000:63bf:3fff:fdd2',
  'fd00:ec2::254',
  'fc00::1',
  'fe80::1',
  'fec0::1',
  'ff02::1',
  '100::1',
  '2001:db8::1',
  '[::1]',
];

describe('checkEndpoint: the loopback allowance', () => {
  it('accepts exactly the listed address:port pairs, in any notation of the address', () => {
    const loopback = new Set([parseLoopbackPair('127.0.0.1:3201'), parseLoopbackPair('[::1]:3202')]);
    expect(checkEndpoint('127.0.0.1', 3201, new Set(), loopback)).toEqual({ ok: true });
    expect(checkEndpoint('::ffff:127.0.0.1', 3201, new Set(), loopback)).toEqual({ ok: true });
    expect(checkEndpoint('::1', 3202, new Set(), loopback)).toEqual({ ok: true });
    expect(checkEndpoint('127.0.0.1', 3202, new Set(), loopback).ok).toBe(false);
    expect(checkEndpoint('127.0.0.2', 3201, new Set(), loopback).ok).toBe(false);
    expect(checkEndpoint('::1', 3201, new Set(), loopback).ok).toBe(false);
    expect(checkEndpoint('127.0.0.1', 3201, new Set(), new Set()).ok).toBe(false);
    expect(checkEndpoint('8.8.8.8', 443, new Set(), loopback)).toEqual({ ok: true });
    expect(checkEndpoint('10.0.0.1', 3201, new Set(), loopback).ok).toBe(false);
  });

  it('parses only loopback IP literals with a port', () => {
    expect(parseLoopbackPair(' 127.0.0.1:3201 ')).toBe('127.0.0.1:3201');
    expect(parseLoopbackPair('[0:0::1]:80')).toBe('[::1]:80');
    for (const bad of ['localhost:80', '10.0.0.1:80', '127.0.0.1', '[::1]', '127.0.0.1:70000', '::1:80'])
      expect(() => parseLoopbackPair(bad), bad).toThrow();
  });
});

describe('checkAddress', () => {
  it.each(BLOCKED)('refuses %s', (a) => {
    expect(checkAddress(a).ok).toBe(false);
  });

  it.each(['8.8.8.8', '1.1.1.1', '93.184.216.34', '2606:4700::1111', '::ffff:8.8.8.8'])('accepts %s', (a) => {
    expect(checkAddress(a)).toEqual({ ok: true });
  });

  it('accepts only the exact addresses of a test allow-list, in any notation', () => {
    const allow = allowSet(['127.0.0.1']);
    expect(checkAddress('127.0.0.1', allow).ok).toBe(true);
    expect(checkAddress('::ffff:127.0.0.1', allow).ok).toBe(true);
    expect(checkAddress('127.0.0.2', allow).ok).toBe(false);
    expect(checkAddress('::1', allow).ok).toBe(false);
  });

  it('names metadata addresses and refuses what is not an address', () => {
    expect(checkAddress('169.254.169.254')).toEqual({
      ok: false,
      reason: '169.254.169.254 is a cloud metadata address',
    });
    expect(checkAddress('example.com').ok).toBe(false);
  });
});

describe('URL host notations', () => {
  // WHATWG URL turns exotic IPv4 forms into dotted decimal; the guard classifies URL.hostname.
  it.each([
    ['https://2130706433/', '127.0.0.1'],
    ['https://0x7f.1/', '127.0.0.1'],
    ['https://0x7f000001/', '127.0.0.1'],
    ['https://017700000001/', '127.0.0.1'],
    ['https://0177.0.0.1/', '127.0.0.1'],
    ['https://127.1/', '127.0.0.1'],
    ['https://127.000.000.001/', '127.0.0.1'],
    ['https://0/', '0.0.0.0'],
    ['https://[::ffff:127.0.0.1]/', '127.0.0.1'],
    ['https://[0:0:0:0:0:ffff:7f00:1]/', '127.0.0.1'],
    ['https://[::]/', '::'],
    ['https://0xa9.0xfe.0xa9.0xfe/', '169.254.169.254'],
    ['https://2852039166/', '169.254.169.254'],
    ['https://①②⑦.0.0.1/', '127.0.0.1'],
  ])('%s is %s and refused', (url, address) => {
    const host = new URL(url).hostname;
    expect(normaliseAddress(host)).toBe(address);
    expect(checkAddress(host).ok).toBe(false);
  });
});

describe('guardedLookup', () => {
  const run = (answers: string[], all: boolean) =>
    new Promise<{ err: Error | null; result: unknown }>((resolve) =>
      guardedLookup(
        async () => answers.map((address) => ({ address, family: address.includes(':') ? 6 : 4 })),
        new Set(),
      )('host.test', { all }, (err, result) => resolve({ err, result })),
    );

  it('fails when any address of the answer is not public (mixed answers)', async () => {
    const { err } = await run(['93.184.216.34', '127.0.0.1'], true);
    expect(err?.message).toContain('127.0.0.1');
  });

  it('hands the checked addresses to the socket, in both callback forms', async () => {
    expect((await run(['93.184.216.34'], true)).result).toEqual([{ address: '93.184.216.34', family: 4 }]);
    expect((await run(['93.184.216.34'], false)).result).toBe('93.184.216.34');
    expect((await run([], true)).err?.message).toContain('no address');
  });
});
