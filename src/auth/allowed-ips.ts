import { BlockList, isIP } from 'node:net';
import type { AccessGrant } from './access-grant';

/**
 * The addresses a grant's `allowedIps` admit, as a node:net BlockList built once per grant (a
 * key's grant is one value for as long as its record is cached), not per request.
 */
const lists = new WeakMap<readonly string[], BlockList>();

/** Whether a request from `address` (req.ip, as TRUST_PROXY defines it) may use the grant. */
export function addressAllowed(grant: AccessGrant, address: string | undefined): boolean {
  const { allowedIps } = grant;
  if (allowedIps === null) return true;
  if (address === undefined) return false;
  let list = lists.get(allowedIps);
  if (!list) {
    list = blockListOf(allowedIps);
    lists.set(allowedIps, list);
  }
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(address)?.[1];
  if (mapped !== undefined) return list.check(mapped, 'ipv4') || list.check(address, 'ipv6');
  const family = isIP(address);
  if (family === 0) return false;
  return list.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

/** `a.b.c.d`, `a.b.c.d/n`, an IPv6 address or `v6/n`; an entry that is none of these admits nothing. */
function blockListOf(ranges: readonly string[]): BlockList {
  const list = new BlockList();
  for (const range of ranges) {
    const [address = '', bits, extra] = range.split('/');
    const family = isIP(address);
    if (family === 0 || extra !== undefined) continue;
    const type = family === 4 ? 'ipv4' : 'ipv6';
    if (bits === undefined) {
      list.addAddress(address, type);
      continue;
    }
    const prefix = /^\d{1,3}$/.test(bits) ? Number(bits) : NaN;
    if (!(prefix <= (family === 4 ? 32 : 128))) continue;
    list.addSubnet(address, prefix, type);
  }
  return list;
}
