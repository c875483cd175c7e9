import type { LookupAddress } from 'node:dns';
import { lookup as dnsLookup } from 'node:dns/promises';
import ipaddr from 'ipaddr.js';

/**
 * Which addresses Podium's outbound client may connect to: only global unicast. Every address
 * is checked where the socket is made (IP literals before connecting, names inside the lookup
 * the socket itself uses, and the socket's remote address once connected), so neither exotic
 * notations nor DNS rebinding between a check and the connect get through.
 */

/** Cloud metadata services, blocked by name even though their ranges are blocked anyway. */
const METADATA = new Set([
  '169.254.169.254',
  '169.254.170.2',
  '100.100.100.200',
  '192.0.0.192',
  'fd00:ec2::254',
]);
/** IPv6 global unicast is 2000::/3; everything outside it (IPv4-compatible `::a.b.c.d` included) is refused. */
const GLOBAL_V6 = ipaddr.parseCIDR('2000::/3');

export type AddressVerdict = { ok: true } | { ok: false; reason: string };

/** Resolves a host name to every address it has (the socket's lookup and the guard share it). */
export type Resolver = (hostname: string) => Promise<LookupAddress[]>;

export const systemResolver: Resolver = (hostname) => dnsLookup(hostname, { all: true, verbatim: true });

/** Thrown (inside the socket's lookup or connect) when an address is not allowed. */
export class BlockedAddressError extends Error {
  readonly code = 'ERR_PODIUM_BLOCKED_ADDRESS';
  constructor(message: string) {
    super(message);
    this.name = 'BlockedAddressError';
  }
}

/** Normalised text of an address (`::ffff:7f00:1` → `127.0.0.1`), or undefined when not an IP. */
export function normaliseAddress(address: string): string | undefined {
  const bare = address.replace(/^\[|\]$/g, '');
  if (!ipaddr.isValid(bare)) return undefined;
  const parsed = ipaddr.parse(bare);
  if (parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress())
    return (parsed as ipaddr.IPv6).toIPv4Address().toString();
  return parsed.toString();
}

/** The verdict on one address; `allow` is the test-only allow-list of exact addresses. */
export function checkAddress(address: string, allow: ReadonlySet<string> = new Set()): AddressVerdict {
  const norm = normaliseAddress(address);
  if (norm === undefined) return { ok: false, reason: `${address} is not an IP address` };
  if (allow.has(norm)) return { ok: true };
  if (METADATA.has(norm)) return { ok: false, reason: `${norm} is a cloud metadata address` };
  const ip = ipaddr.parse(norm);
  const range = ip.range();
  if (range !== 'unicast') return { ok: false, reason: `${norm} is not a public address (${range})` };
  if (ip.kind() === 'ipv6' && !ip.match(GLOBAL_V6))
    return { ok: false, reason: `${norm} is not a public address (outside 2000::/3)` };
  return { ok: true };
}

/** Key of one address:port pair of a loopback allowance: `127.0.0.1:3201`, `[::1]:3201`. */
export function endpointKey(address: string, port: number): string {
  return address.includes(':') ? `[${address}]:${port}` : `${address}:${port}`;
}

/**
 * Parses one pair of the local-only allowance (`PODIUM_OUTBOUND_LOOPBACK_ALLOW`): an IP literal
 * of a loopback address and an explicit port. Names, wildcards, ranges and non-loopback addresses
 * are refused: the allowance exists to reach a reference ad server on this machine, nothing else.
 */
export function parseLoopbackPair(raw: string): string {
  const m = /^(?:\[([0-9a-fA-F:.]+)\]|([0-9.]+)):(\d{1,5})$/.exec(raw.trim());
  if (!m) throw new Error(`${raw} is not address:port (IPv6 as [::1]:port)`);
  const port = Number(m[3]);
  if (port < 1 || port > 65_535) throw new Error(`${raw}: port must be between 1 and 65535`);
  const address = normaliseAddress(m[1] ?? m[2]!);
  if (address === undefined) throw new Error(`${raw}: ${m[1] ?? m[2]} is not an IP address`);
  if (ipaddr.parse(address).range() !== 'loopback')
    throw new Error(`${raw}: ${address} is not a loopback address`);
  return endpointKey(address, port);
}

/**
 * The verdict on the address and port a socket connects to: an exact pair of the loopback
 * allowance passes (that address on that port only); everything else is judged by `checkAddress`.
 */
export function checkEndpoint(
  address: string,
  port: number,
  allow: ReadonlySet<string>,
  loopback: ReadonlySet<string>,
): AddressVerdict {
  const norm = normaliseAddress(address);
  if (norm !== undefined && loopback.has(endpointKey(norm, port))) return { ok: true };
  const verdict = checkAddress(address, allow);
  if (!verdict.ok && norm !== undefined && loopback.size && ipaddr.parse(norm).range() === 'loopback')
    return { ok: false, reason: `${verdict.reason}; port ${port} is not in PODIUM_OUTBOUND_LOOPBACK_ALLOW` };
  return verdict;
}

/** `localhost` and every name under it (RFC 6761), in any case, with or without the root dot. */
const LOOPBACK_NAME = /(^|\.)localhost\.?$/i;

/**
 * The verdict on a host name before it is resolved: names that always mean loopback are refused
 * as their addresses are, so a URL naming one is refused when saved, not only at connect time.
 */
export function checkHostName(hostname: string): AddressVerdict {
  return LOOPBACK_NAME.test(hostname)
    ? { ok: false, reason: `${hostname} is not a public address (loopback)` }
    : { ok: true };
}

/** Normalises a test allow-list (addresses in any notation) for `checkAddress`. */
export function allowSet(addresses: readonly string[] = []): ReadonlySet<string> {
  return new Set(addresses.map((a) => normaliseAddress(a) ?? a));
}

type LookupCallback = (
  err: NodeJS.ErrnoException | null,
  address: string | LookupAddress[],
  family?: number,
) => void;

/**
 * A `lookup` for `net.connect`/`tls.connect` that resolves with `resolver` and fails unless
 * EVERY address is allowed; the socket then connects to exactly the addresses checked here.
 */
export function guardedLookup(resolver: Resolver, allow: ReadonlySet<string>) {
  return (hostname: string, options: { all?: boolean }, callback: LookupCallback): void => {
    resolver(hostname).then(
      (addresses) => {
        if (!addresses.length) {
          const err: NodeJS.ErrnoException = new Error(`${hostname} has no address`);
          err.code = 'ENOTFOUND';
          return callback(err, '');
        }
        for (const a of addresses) {
          const verdict = checkAddress(a.address, allow);
          if (!verdict.ok)
            return callback(new BlockedAddressError(`${hostname} resolves to ${verdict.reason}`), '');
        }
        if (options.all) return callback(null, addresses);
        return callback(null, addresses[0]!.address, addresses[0]!.family);
      },
      (err: NodeJS.ErrnoException) => callback(err, ''),
    );
  };
}
