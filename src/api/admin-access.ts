// Who may call which admin route: the one table to audit (decisions 170, 188). A state-changing route not listed
// here needs the admin role, and a read needs the viewer's, so a route added later is closed until someone decides.
import type { OperatorRole } from '../domain/actor.js';
import { CONSOLE_PATH } from './routes/console.js';

/** What a route does, and so which roles may call it. */
export type Permission = 'read' | 'operate' | 'approve' | 'administer';

/**
 * open: the spec's four admin endpoints, which need no credentials (spec, Authentication 5).
 * page: the console's static files, which hold no data (the page asks for a token before it reads anything).
 * Otherwise the permission the caller's role must hold.
 */
export type AdminAccess = 'open' | 'page' | Permission;

const OPEN_ROUTES: ReadonlySet<string> = new Set([
  'GET /admin/overview',
  'GET /admin/route-distribution',
  'GET /admin/failures',
  'POST /admin/chain-health',
]);

/** Every state-changing admin route and what it needs. */
const ACTIONS: Readonly<Record<string, Permission>> = {
  'POST /admin/payments/:id/resolve': 'operate',
  'POST /admin/payments/:id/cancel': 'operate',
  'POST /admin/payments/:id/refund': 'operate',
  'POST /admin/webhook-events/:id/redeliver': 'operate',
  'POST /admin/payment_intents/:id/approve': 'approve',
  'POST /admin/payment_intents/:id/reject': 'approve',
  'POST /admin/withdrawals': 'administer',
  'POST /admin/merchants/:id/addresses': 'administer',
  'DELETE /admin/merchants/:id/addresses/:chain/:address': 'administer',
};

/** The roles: a viewer reads; an operator also works payments; an approver also decides on held ones; an admin does all. */
export const ROLE_PERMISSIONS: Readonly<Record<OperatorRole, ReadonlySet<Permission>>> = {
  viewer: new Set(['read']),
  operator: new Set(['read', 'operate']),
  approver: new Set(['read', 'approve']),
  admin: new Set(['read', 'operate', 'approve', 'administer']),
};

/** The access of a route, by its method and its declared URL (`request.routeOptions.url`, parameters unfilled). */
export function adminAccessOf(method: string, routeUrl: string | undefined): AdminAccess {
  const verb = method === 'HEAD' ? 'GET' : method;
  if (routeUrl === undefined) return verb === 'GET' ? 'read' : 'administer';
  const route = `${verb} ${routeUrl}`;
  if (OPEN_ROUTES.has(route)) return 'open';
  if (verb === 'GET' && (routeUrl === CONSOLE_PATH || routeUrl.startsWith(`${CONSOLE_PATH}/`))) return 'page';
  return ACTIONS[route] ?? (verb === 'GET' ? 'read' : 'administer');
}

export function roleMay(role: OperatorRole, permission: Permission): boolean {
  return ROLE_PERMISSIONS[role].has(permission);
}
