// Checks in front of /admin/*, /console and /metrics (decisions 96, 97), in this order; every refusal is an error body
// with a code, and nothing runs behind it.
//   1. Host: only names the listener is known by (DNS rebinding points evil.example at 127.0.0.1; the browser then
//      sends `Host: evil.example`, which is refused, so a page cannot read the overview).
//   2. Who may call the route (src/api/admin-access.ts): the spec's four endpoints need no credentials, but in
//      production a peer that is not loopback reaches them on the public listener only after
//      ADMIN_EXPOSE_OPEN_ENDPOINTS=on; every other route needs `Authorization: Bearer <ADMIN_TOKEN>` in production
//      from any peer on any listener (without ADMIN_TOKEN it is refused), and in development from any peer but
//      loopback. The peer is the socket's address: Host, Origin and X-Forwarded-For are the client's own words.
//   3. Origin: a state-changing request (POST, PUT, PATCH, DELETE) sent by a browser must come from the admin origin
//      itself; a cross-site form or fetch() (even `no-cors`, which needs no preflight) is refused.
// Between 2 and any refusal, the request counts against its caller's rate limit (decision 217): the operator once its
// token is known, else the address; so refusals count too, and every answer carries the X-RateLimit-* headers.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { networkInterfaces } from 'node:os';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { isLoopbackAddress } from '../domain/network-address.js';
import type { Actor, OperatorRole } from '../domain/actor.js';
import { adminAccessOf, roleMay, type Permission } from './admin-access.js';
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
  /** NODE_ENV=production: every route but the open ones needs the token, from every peer. */
  production: boolean;
  /** These routes are served on the public listener (ADMIN_PORT unset). */
  publicListener: boolean;
  /** ADMIN_EXPOSE_OPEN_ENDPOINTS: the open routes answer every peer of the public listener in production too. */
  exposeOpenEndpoints: boolean;
  /** The active operator holding a bearer token, or null (looked up on every request: a disabled one is refused at once). */
  authenticate(token: string): Promise<{ id: string; role: OperatorRole } | null>;
  /** Counts the request against its caller (request.adminActor, else its address), throwing the 429; null: no limit. */
  limit: ((request: FastifyRequest, reply: FastifyReply) => Promise<void>) | null;
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

declare module 'fastify' {
  interface FastifyRequest {
    /** Who is calling an admin route, set by the guard (null on the open routes without credentials and on the page). */
    adminActor: Actor | null;
  }
}

/** Adds the checks to the admin scope. */
export function registerAdminGuard(scope: FastifyInstance, options: AdminGuardOptions): void {
  const allowed = new Set((options.allowedHosts ?? defaultAdminHosts(options.listenHost)).map((h) => hostnameOf(h) ?? h));
  const tokenMatches = options.adminToken === null ? null : tokenMatcher(options.adminToken);
  scope.decorateRequest('adminActor', null);

  scope.addHook('onRequest', async (request: FastifyRequest, reply: FastifyReply) => {
    const hostname = hostnameOf(request.headers.host);
    const hostAllowed = hostname !== null && allowed.has(hostname);
    // A Host refused is answered without looking at the credentials; it still counts, against the address.
    const admitted = hostAllowed ? await admit(request, options, tokenMatches) : null;
    // An identified caller refused for its role is still who asked: it is counted, and the refusal audited, under its name.
    if (admitted !== null) request.adminActor = admitted.actor ?? null;
    await options.limit?.(request, reply);
    if (admitted === null) {
      return sendError(reply, 403, 'HOST_NOT_ALLOWED', 'The admin API does not answer to this Host; see ADMIN_ALLOWED_HOSTS');
    }
    if ('status' in admitted) {
      if (admitted.status === 401) reply.header('www-authenticate', 'Bearer realm="stableroute-admin"');
      return sendError(reply, admitted.status, admitted.code, admitted.message);
    }
    const crossSite = crossSiteProblem(request.method, request.headers);
    if (crossSite !== null) return sendError(reply, 403, 'CROSS_SITE_REQUEST', crossSite);
    return undefined;
  });
}

interface Refusal {
  status: 401 | 403;
  code: 'UNAUTHORIZED' | 'ADMIN_NOT_EXPOSED' | 'FORBIDDEN';
  message: string;
  /** The identified caller a role refusal concerns. */
  actor?: Actor;
}

const unauthorized = (message: string): Refusal => ({ status: 401, code: 'UNAUTHORIZED', message });

/** The caller this request's credentials name, or why they name none. */
async function credentialsOf(request: FastifyRequest, options: AdminGuardOptions, tokenMatches: ((presented: string) => boolean) | null, peer: string | null): Promise<Actor | Refusal | null> {
  if (request.headers.authorization === undefined) return null;
  const presented = bearerOf(request);
  if (presented === null) return unauthorized('The Authorization header must be Bearer <token>');
  if (tokenMatches?.(presented)) return { id: 'break-glass', role: 'admin', peer };
  const operator = await options.authenticate(presented);
  if (operator === null) return unauthorized('The token is not valid (unknown, rotated out, or its operator disabled)');
  return { id: operator.id, role: operator.role, peer };
}

/** Who this peer is for this route, or why it may not call it (decisions 96, 101). */
async function admit(request: FastifyRequest, options: AdminGuardOptions, tokenMatches: ((presented: string) => boolean) | null): Promise<{ actor: Actor | null } | Refusal> {
  const access = adminAccessOf(request.method, request.routeOptions.url);
  if (access === 'page') return { actor: null };
  const peer = request.socket.remoteAddress ?? null;
  // Credentials presented are checked even where none are needed: a wrong token is a mistake worth a clear answer.
  const credentials = await credentialsOf(request, options, tokenMatches, peer);
  if (credentials !== null && 'status' in credentials) return credentials;
  const loopback = isLoopbackAddress(peer ?? undefined);
  if (access === 'open') {
    if (credentials !== null || loopback || !options.production || !options.publicListener || options.exposeOpenEndpoints) return { actor: credentials };
    return {
      status: 403,
      code: 'ADMIN_NOT_EXPOSED',
      message: 'In production the admin endpoints answer loopback only on the public listener; serve them on ADMIN_PORT, or set ADMIN_EXPOSE_OPEN_ENDPOINTS=on',
    };
  }
  if (credentials !== null) {
    if (credentials.role !== null && roleMay(credentials.role, access)) return { actor: credentials };
    return { status: 403, code: 'FORBIDDEN', message: `The ${credentials.role ?? 'anonymous'} role may not ${PERMISSION_VERBS[access]}`, actor: credentials };
  }
  if (options.production || tokenMatches !== null) return unauthorized('Missing Authorization: Bearer <operator token or ADMIN_TOKEN>');
  if (loopback) return { actor: { id: 'local', role: 'admin', peer } };
  return unauthorized('Admin actions from another address need an operator token (or ADMIN_TOKEN) as Authorization: Bearer');
}

const PERMISSION_VERBS: Record<Permission, string> = {
  read: 'read the admin API',
  operate: 'act on payments or webhooks',
  approve: 'approve or reject held payments',
  administer: 'change withdrawals, address books, policies, merchants or operators',
};
