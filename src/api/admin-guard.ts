// Checks in front of /admin/* (decision 94). The admin API has no user accounts: it trusts the network it is served
// on. A browser on that network must not become a way in:
//   1. Host: only names the listener is known by (DNS rebinding points evil.example at 127.0.0.1; the browser then
//      sends `Host: evil.example`, which is refused, so a page cannot read the overview).
//   2. ADMIN_TOKEN, when configured: `Authorization: Bearer <token>`, compared in constant time.
//   3. Origin: a state-changing request (POST, PUT, PATCH, DELETE) sent by a browser must come from the admin origin
//      itself; a cross-site form or fetch() (even `no-cors`, which needs no preflight) is refused.
// Every refusal is an error body with a code; nothing runs behind it.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { networkInterfaces } from 'node:os';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { sendError } from './errors.js';

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);
const LOCAL_NAMES = ['localhost', '127.0.0.1', '::1'];
// What a browser says about where a request came from (Fetch Metadata); 'none' is a typed URL or a bookmark.
const SAME_ORIGIN_FETCH_SITES = new Set(['same-origin', 'none']);

export interface AdminGuardOptions {
  /** ADMIN_ALLOWED_HOSTS; null: localhost names plus the listener's own address. */
  allowedHosts: readonly string[] | null;
  /** The address the listener binds (HOST or ADMIN_HOST). */
  listenHost: string;
  adminToken: string | null;
  /**
   * Paths whose GETs need no token: the console's page and scripts, which hold no data (the page asks for the token
   * and sends it with every data request, decision 123). The Host check still applies to them.
   */
  tokenFreePrefixes?: readonly string[];
}

/** Lower case, no brackets around IPv6, no trailing dot, no port. Null for a malformed Host header. */
export function hostnameOf(hostHeader: string | undefined): string | null {
  if (hostHeader === undefined || hostHeader === '') return null;
  const host = hostHeader.trim().toLowerCase();
  let name: string;
  if (host.startsWith('[')) {
    const end = host.indexOf(']');
    if (end < 0) return null;
    name = host.slice(1, end);
  } else {
    const colons = host.split(':').length - 1;
    name = colons === 1 ? host.slice(0, host.indexOf(':')) : host;
  }
  name = name.replace(/\.$/, '');
  return name === '' ? null : name;
}

/** The names a listener on `listenHost` answers to when ADMIN_ALLOWED_HOSTS is unset. */
export function defaultAdminHosts(listenHost: string): string[] {
  const hosts = new Set(LOCAL_NAMES);
  const bound = hostnameOf(listenHost);
  if (bound === '0.0.0.0' || bound === '::') {
    // Bound to every interface: each interface address is the listener's own.
    for (const addresses of Object.values(networkInterfaces())) {
      for (const a of addresses ?? []) hosts.add(a.address.toLowerCase().replace(/%.*$/, ''));
    }
  } else if (bound !== null) hosts.add(bound);
  return [...hosts];
}

/** True when `origin` (an Origin header) names the same scheme-less host and port as `hostHeader`. */
function sameOrigin(origin: string, hostHeader: string | undefined): boolean {
  if (hostHeader === undefined) return false;
  try {
    return new URL(origin).host.toLowerCase() === new URL(`http://${hostHeader}`).host.toLowerCase();
  } catch {
    return false;
  }
}

/** Why a state-changing request is cross-site, or null. Requests from non-browser clients carry neither header. */
export function crossSiteProblem(method: string, headers: FastifyRequest['headers']): string | null {
  if (SAFE_METHODS.has(method)) return null;
  const origin = typeof headers.origin === 'string' ? headers.origin : undefined;
  if (origin !== undefined) {
    if (origin === 'null' || !sameOrigin(origin, headers.host)) return 'a cross-site request to the admin API is refused';
    return null;
  }
  const site = headers['sec-fetch-site'];
  if (typeof site === 'string' && !SAME_ORIGIN_FETCH_SITES.has(site.toLowerCase())) {
    return 'a cross-site request to the admin API is refused';
  }
  return null;
}

/** Constant-time comparison of bearer tokens of any length: both sides are reduced to an HMAC under a random key. */
function tokenMatcher(token: string): (presented: string) => boolean {
  const key = randomBytes(32);
  const expected = createHmac('sha256', key).update(token).digest();
  return (presented) => timingSafeEqual(createHmac('sha256', key).update(presented).digest(), expected);
}

function bearerOf(request: FastifyRequest): string | null {
  const header = request.headers.authorization;
  if (typeof header !== 'string') return null;
  const match = /^Bearer\s+(.+)$/i.exec(header.trim());
  return match ? match[1]!.trim() : null;
}

/** Adds the checks to the admin scope. */
export function registerAdminGuard(scope: FastifyInstance, options: AdminGuardOptions): void {
  const allowed = new Set((options.allowedHosts ?? defaultAdminHosts(options.listenHost)).map((h) => hostnameOf(h) ?? h));
  const tokenMatches = options.adminToken === null ? null : tokenMatcher(options.adminToken);

  scope.addHook('onRequest', async (request: FastifyRequest, reply: FastifyReply) => {
    const hostname = hostnameOf(request.headers.host);
    if (hostname === null || !allowed.has(hostname)) {
      return sendError(reply, 403, 'HOST_NOT_ALLOWED', 'The admin API does not answer to this Host; see ADMIN_ALLOWED_HOSTS');
    }
    const tokenFree = SAFE_METHODS.has(request.method) && (options.tokenFreePrefixes ?? []).some((p) => request.url === p || request.url.startsWith(`${p}/`));
    if (tokenMatches !== null && !tokenFree) {
      const presented = bearerOf(request);
      if (presented === null || !tokenMatches(presented)) {
        reply.header('www-authenticate', 'Bearer realm="stableroute-admin"');
        return sendError(reply, 401, 'UNAUTHORIZED', presented === null ? 'Missing Authorization: Bearer header' : 'The admin token is not valid');
      }
    }
    const crossSite = crossSiteProblem(request.method, request.headers);
    if (crossSite !== null) return sendError(reply, 403, 'CROSS_SITE_REQUEST', crossSite);
    return undefined;
  });
}
