// The SSRF guard of webhook delivery (decision 73). A merchant chooses its webhook_url, so without a guard it chooses
// where our server sends POSTs: the cloud metadata service (169.254.169.254), the admin listener on 127.0.0.1, a
// database on the private network. Before every attempt the host is resolved once, every address it resolves to must
// be public unicast (or inside WEBHOOK_ALLOWED_HOSTS), and the request is then made to that checked address: no second
// DNS lookup, so a name that answers a public address to the check and 127.0.0.1 to the connect (DNS rebinding) gains
// nothing. Redirects are never followed (request.ts).
//
// Non-public: loopback, private (RFC 1918), unique local (fc00::/7), link-local (169.254/16, fe80::/10), carrier-grade
// NAT (100.64/10), multicast, unspecified, broadcast, reserved and documentation ranges, and the IPv6 forms that embed
// one of them (IPv4-mapped ::ffff:a.b.c.d, IPv4-compatible ::a.b.c.d, IPv4-translated, NAT64 64:ff9b::/96, 6to4
// 2002::/16). Decimal, octal and hex IPv4 spellings (http://2130706433/, http://0x7f.1/) never get this far as
// themselves: the WHATWG URL parser turns them into 127.0.0.1 first.
import { lookup } from 'node:dns/promises';
import ipaddr from 'ipaddr.js';

type Address = ipaddr.IPv4 | ipaddr.IPv6;

export interface AllowList {
  /** Host names (lower case, no trailing dot) reachable whatever they resolve to, over http too. */
  hosts: ReadonlySet<string>;
  /** Address ranges reachable whatever they are; an address literal in the list is a /32 or /128. */
  ranges: readonly (readonly [Address, number])[];
}

export interface DestinationPolicy {
  /** Refuse non-public destinations (WEBHOOK_SSRF_GUARD; on by default in production). */
  guard: boolean;
  /** Refuse plain http, except to allowlisted hosts (production). */
  requireHttps: boolean;
  allow: AllowList;
}

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Resolves a host name to every address it has, the way the operating system would. */
export type Resolver = (hostname: string) => Promise<ResolvedAddress[]>;

export const systemResolver: Resolver = async (hostname) =>
  (await lookup(hostname, { all: true, verbatim: true })).map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }));

/** The policy the settings describe: WEBHOOK_SSRF_GUARD, WEBHOOK_ALLOWED_HOSTS, and https in production. */
export function destinationPolicy(config: { production: boolean; webhookSsrfGuard: boolean; webhookAllowedHosts: readonly string[] }): DestinationPolicy {
  return { guard: config.webhookSsrfGuard, requireHttps: config.production, allow: parseAllowList(config.webhookAllowedHosts) };
}

/** The destination may not be reached; retrying will not change that until a setting or the URL changes. */
export class DestinationRefusedError extends Error {
  override readonly name = 'DestinationRefusedError';
}

const RANGE_NAMES: Record<string, string> = {
  loopback: 'loopback',
  private: 'private (RFC 1918)',
  uniqueLocal: 'unique local (fc00::/7)',
  linkLocal: 'link-local',
  carrierGradeNat: 'carrier-grade NAT (100.64/10)',
  multicast: 'multicast',
  unspecified: 'unspecified',
  broadcast: 'broadcast',
};

function rangeName(range: string): string {
  return RANGE_NAMES[range] ?? `${range} (not public unicast)`;
}

function ipv4From(high: number, low: number): ipaddr.IPv4 {
  return new ipaddr.IPv4([high >> 8, high & 0xff, low >> 8, low & 0xff]);
}

/** The IPv4 address an IPv6 address stands for, with the form's name, when it embeds one. */
function embeddedIPv4(v6: ipaddr.IPv6): { v4: ipaddr.IPv4; form: string } | null {
  const p = v6.parts;
  switch (v6.range()) {
    case 'ipv4Mapped':
      return { v4: v6.toIPv4Address(), form: 'IPv4-mapped' };
    case 'rfc6145':
      return { v4: ipv4From(p[6]!, p[7]!), form: 'IPv4-translated' };
    case 'rfc6052':
      // The well-known NAT64 prefix 64:ff9b::/96; the local-use 64:ff9b:1::/48 stays refused as a whole.
      return p[2] === 0 && p[3] === 0 && p[4] === 0 && p[5] === 0 ? { v4: ipv4From(p[6]!, p[7]!), form: 'NAT64' } : null;
    case '6to4':
      return { v4: ipv4From(p[1]!, p[2]!), form: '6to4' };
    default:
      // IPv4-compatible (::a.b.c.d, deprecated but still routed by some stacks); :: and ::1 are named on their own.
      return p.slice(0, 6).every((x) => x === 0) && v6.range() === 'unicast' ? { v4: ipv4From(p[6]!, p[7]!), form: 'IPv4-compatible' } : null;
  }
}

/** Why an IP address is not a public unicast address, or null when it is. Throws on a string that is not one. */
export function nonPublicRange(address: string): string | null {
  const ip = ipaddr.parse(address);
  if (ip.kind() === 'ipv4') {
    const range = (ip as ipaddr.IPv4).range();
    return range === 'unicast' ? null : rangeName(range);
  }
  const v6 = ip as ipaddr.IPv6;
  const embedded = embeddedIPv4(v6);
  if (embedded !== null) {
    const inner = embedded.v4.range();
    return inner === 'unicast' ? null : `${embedded.form} ${rangeName(inner)}`;
  }
  const range = v6.range();
  return range === 'unicast' ? null : rangeName(range);
}

/** The literal address in a URL hostname ("[::1]" -> "::1"), or null for a name. */
function literalAddress(hostname: string): string | null {
  const bare = hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
  return ipaddr.IPv6.isValid(bare) || ipaddr.IPv4.isValidFourPartDecimal(bare) ? bare : null;
}

function normalisedName(hostname: string): string {
  return hostname.toLowerCase().replace(/\.$/, '');
}

/**
 * WEBHOOK_ALLOWED_HOSTS entries: host names, IP addresses or CIDR ranges. Throws an Error naming the bad entry.
 */
export function parseAllowList(entries: readonly string[]): AllowList {
  const hosts = new Set<string>();
  const ranges: [Address, number][] = [];
  for (const raw of entries) {
    const entry = raw.trim();
    if (entry === '') continue;
    if (entry.includes('/')) {
      if (!ipaddr.isValidCIDR(entry)) throw new Error(`"${entry}" is not a CIDR range`);
      ranges.push(ipaddr.parseCIDR(entry));
    } else if (literalAddress(entry) !== null) {
      const ip = ipaddr.parse(literalAddress(entry)!);
      ranges.push([ip, ip.kind() === 'ipv4' ? 32 : 128]);
    } else if (/^[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?(\.[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?)*\.?$/i.test(entry)) {
      hosts.add(normalisedName(entry));
    } else {
      throw new Error(`"${entry}" is not a host name, an IP address or a CIDR range`);
    }
  }
  return { hosts, ranges };
}

/** True when the address is inside an allowlisted range (an IPv4-mapped address also matches its IPv4 range). */
function inAllowedRange(allow: AllowList, address: string): boolean {
  const ip = ipaddr.parse(address);
  const forms: Address[] = [ip];
  if (ip.kind() === 'ipv6' && (ip as ipaddr.IPv6).isIPv4MappedAddress()) forms.push((ip as ipaddr.IPv6).toIPv4Address());
  return allow.ranges.some(([range, bits]) => forms.some((form) => form.kind() === range.kind() && form.match(range, bits)));
}

function isAllowlistedHost(url: URL, policy: DestinationPolicy): boolean {
  const literal = literalAddress(url.hostname);
  if (literal !== null) return inAllowedRange(policy.allow, literal);
  return policy.allow.hosts.has(normalisedName(url.hostname));
}

/**
 * What can be said about a webhook URL without DNS, at onboarding and before each attempt: plain http where https is
 * required, and a literal address that is not public. Null when nothing is wrong so far.
 */
export function destinationProblem(url: URL, policy: DestinationPolicy): string | null {
  const allowlisted = isAllowlistedHost(url, policy);
  if (policy.requireHttps && url.protocol !== 'https:' && !allowlisted) {
    return 'must use https in production (an internal http receiver can be allowed with WEBHOOK_ALLOWED_HOSTS)';
  }
  const literal = literalAddress(url.hostname);
  if (policy.guard && literal !== null && !allowlisted) {
    const range = nonPublicRange(literal);
    if (range !== null) return `points at ${literal}, a ${range} address (WEBHOOK_ALLOWED_HOSTS allows an internal receiver)`;
  }
  return null;
}

/**
 * The one address an attempt connects to. Throws DestinationRefusedError when the URL or any address the host
 * resolves to is refused (all of them are checked: the system may try any), and the resolver's error when DNS fails
 * (retried like any connection error).
 */
export async function resolveDestination(url: URL, policy: DestinationPolicy, resolve: Resolver = systemResolver): Promise<ResolvedAddress> {
  const problem = destinationProblem(url, policy);
  if (problem !== null) throw new DestinationRefusedError(`webhook_url ${problem}`);
  const literal = literalAddress(url.hostname);
  const addresses: ResolvedAddress[] =
    literal !== null ? [{ address: literal, family: literal.includes(':') ? 6 : 4 }] : await resolve(normalisedName(url.hostname));
  if (addresses.length === 0) throw new Error(`${url.hostname} has no address`);
  if (policy.guard && !isAllowlistedHost(url, policy)) {
    for (const { address } of addresses) {
      const range = nonPublicRange(address);
      if (range !== null && !inAllowedRange(policy.allow, address)) {
        throw new DestinationRefusedError(
          `webhook host ${url.hostname} resolves to ${address}, a ${range} address (WEBHOOK_ALLOWED_HOSTS allows an internal receiver)`,
        );
      }
    }
  }
  return addresses[0]!;
}
