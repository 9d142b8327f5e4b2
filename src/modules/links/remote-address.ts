import ipaddr from 'ipaddr.js';

/**
 * Where an IP address points, for the rule "a remote is untrusted input" (issue 34):
 * - `public`: a global unicast address, which any remote URL may use;
 * - `local`: loopback, private (RFC 1918), carrier-grade NAT (100.64/10) or unique-local
 *   (fc00::/7): the addresses of a self-hosted remote on the same machine or network, allowed only
 *   for the remote's own hosts or when the operator widens the rule;
 * - `forbidden`: everything else (link-local with the cloud metadata address 169.254.169.254,
 *   unspecified, multicast, broadcast, documentation, benchmarking and other reserved ranges, the
 *   IPv6 forms that embed an IPv4 address such as 6to4, NAT64 and the deprecated IPv4-compatible
 *   ::7f00:1), or a string that is no address: never fetched, whatever the settings.
 * IPv4-mapped IPv6 (::ffff:a.b.c.d, and any IPv6 written with a dotted tail, such as ::a.b.c.d)
 * is judged as the IPv4 address it carries.
 */
export type AddressKind = 'public' | 'local' | 'forbidden';

const LOCAL_IPV4 = new Set<string>(['loopback', 'private', 'carrierGradeNat']);
const LOCAL_IPV6 = new Set<string>(['loopback', 'uniqueLocal']);
/**
 * ipaddr.js calls "unicast" whatever is in none of its special ranges, which for IPv6 includes
 * the unallocated rest of ::/8 (the deprecated IPv4-compatible ::7f00:1 among it): only the
 * global unicast block (RFC 4291 2.4) is public.
 */
const GLOBAL_UNICAST_IPV6 = ipaddr.IPv6.parseCIDR('2000::/3');

export function addressKind(address: string): AddressKind {
  if (!ipaddr.isValid(address)) return 'forbidden';
  const ip = ipaddr.process(address);
  if (ip.kind() === 'ipv4') {
    const range = ip.range();
    if (range === 'unicast') return 'public';
    return LOCAL_IPV4.has(range) ? 'local' : 'forbidden';
  }
  const v6 = ip as ipaddr.IPv6;
  const range = v6.range();
  if (range === 'unicast') return v6.match(GLOBAL_UNICAST_IPV6) ? 'public' : 'forbidden';
  return LOCAL_IPV6.has(range) ? 'local' : 'forbidden';
}
