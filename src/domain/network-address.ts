// What a listener or peer address is, for deciding who may reach the admin endpoints (decision 96). Addresses only:
// a Host or X-Forwarded-For header is whatever the client wrote, so nothing here reads headers.
import ipaddr from 'ipaddr.js';

/** True for a loopback peer (127.0.0.0/8, ::1, and IPv4 loopback mapped into IPv6). */
export function isLoopbackAddress(address: string | undefined): boolean {
  const bare = address?.replace(/^\[|\]$/g, '');
  if (bare === undefined || !ipaddr.isValid(bare)) return false;
  return ipaddr.process(bare).range() === 'loopback';
}

/** True for a bind address that takes every interface (0.0.0.0, ::, or an empty host). */
export function isWildcardAddress(address: string): boolean {
  const bare = address.trim().replace(/^\[|\]$/g, '');
  return bare === '' || (ipaddr.isValid(bare) && ipaddr.process(bare).range() === 'unspecified');
}

/** True when two bind addresses name the same interface (compared as addresses when both parse, else as names). */
export function sameBindAddress(a: string, b: string): boolean {
  const bareA = a.trim().replace(/^\[|\]$/g, '').toLowerCase();
  const bareB = b.trim().replace(/^\[|\]$/g, '').toLowerCase();
  if (ipaddr.isValid(bareA) && ipaddr.isValid(bareB)) return ipaddr.process(bareA).toString() === ipaddr.process(bareB).toString();
  return bareA === bareB;
}
