import { lookup } from 'node:dns';
import type { LookupFunction } from 'node:net';
import { BlockList, isIP } from 'node:net';

/**
 * Addresses a webhook may not reach unless WEBHOOK_ALLOW_PRIVATE=true: loopback, private,
 * carrier-grade NAT, link-local (cloud metadata services), multicast, reserved and unspecified
 * ranges, for IPv4 and IPv6 (an IPv4-mapped IPv6 address is checked as its IPv4 address).
 */
const PRIVATE = new BlockList();
for (const [address, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const)
  PRIVATE.addSubnet(address, prefix, 'ipv4');
for (const [address, prefix] of [
  ['::', 127],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
  ['64:ff9b::', 96],
] as const)
  PRIVATE.addSubnet(address, prefix, 'ipv6');

/** Whether an IP address is one a webhook may not reach by default. */
export function isPrivateAddress(address: string): boolean {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)?.[1];
  if (mapped) return PRIVATE.check(mapped, 'ipv4');
  const family = isIP(address);
  if (family === 0) return true;
  return PRIVATE.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

/** Why a URL cannot be a webhook endpoint, or null when it can (before name resolution). */
export function urlProblem(raw: string): string | null {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'must be an absolute http(s) URL';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'must be an http(s) URL';
  if (url.username !== '' || url.password !== '') return 'must not carry credentials';
  return null;
}

/**
 * A DNS lookup for outgoing webhook requests that refuses private addresses: the check is made
 * on the address the connection then uses, so a name that resolves differently later (DNS
 * rebinding) cannot slip through.
 */
export function guardedLookup(allowPrivate: boolean): LookupFunction {
  return (hostname, options, callback) => {
    lookup(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error, '', 0);
      const list = addresses as unknown as { address: string; family: number }[];
      const refused = list.find((a) => !allowPrivate && isPrivateAddress(a.address));
      if (refused)
        return callback(
          Object.assign(
            new Error(`${hostname} resolves to a private address (${refused.address})`),
            {
              code: 'EPRIVATE',
            },
          ),
          '',
          0,
        );
      if (options.all) return callback(null, list, 0);
      const first = list[0];
      if (!first) return callback(new Error(`${hostname} has no address`), '', 0);
      callback(null, first.address, first.family);
    });
  };
}

/** Resolves the URL's host now and says why it may not be called, or null. */
export function resolveProblem(raw: string, allowPrivate: boolean): Promise<string | null> {
  const host = new URL(raw).hostname.replace(/^\[|\]$/g, '');
  return new Promise((resolve) => {
    guardedLookup(allowPrivate)(host, { all: true }, (error) =>
      resolve(
        error
          ? error.code === 'EPRIVATE'
            ? 'resolves to a loopback, private or link-local address (WEBHOOK_ALLOW_PRIVATE is off)'
            : `cannot be resolved (${error.code ?? error.message})`
          : null,
      ),
    );
  });
}
