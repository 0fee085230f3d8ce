// Who may call which admin route: the one table to audit (decisions 96, 101). A state-changing route not listed
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

/** Every state-changing admin route: what it needs, and the action its audit record names (decision 102). */
const ACTIONS: Readonly<Record<string, { permission: Permission; action: string }>> = {
  'POST /admin/payments/:id/resolve': { permission: 'operate', action: 'payment.resolve' },
  'POST /admin/payments/:id/cancel': { permission: 'operate', action: 'payment.cancel' },
  'POST /admin/payments/:id/refund': { permission: 'operate', action: 'payment.refund' },
  'POST /admin/books/:chain/attach': { permission: 'operate', action: 'books.attach' },
  'POST /admin/books/:chain/foreign': { permission: 'operate', action: 'books.foreign' },
  'POST /admin/webhook-events/:id/redeliver': { permission: 'operate', action: 'webhook_event.redeliver' },
  'POST /admin/payment_intents/:id/approve': { permission: 'approve', action: 'payment.approve' },
  'POST /admin/payment_intents/:id/reject': { permission: 'approve', action: 'payment.reject' },
  'POST /admin/payout_batches/:id/approve': { permission: 'approve', action: 'payout_batch.approve' },
  'POST /admin/payout_batches/:id/reject': { permission: 'approve', action: 'payout_batch.reject' },
  'POST /admin/withdrawals': { permission: 'administer', action: 'withdrawal.create' },
  'POST /admin/merchants/:id/addresses': { permission: 'administer', action: 'address_book.add' },
  'DELETE /admin/merchants/:id/addresses/:chain/:address': { permission: 'administer', action: 'address_book.remove' },
};

/**
 * Reads listed so that their permission is a visible choice: exports copy every merchant's payouts in bulk, yet
 * need only `read`, as an accountant's viewer token reads the same rows page by page; each export is in the audit
 * log instead (decision 155).
 */
const READS: Readonly<Record<string, Permission>> = {
  'GET /admin/exports/payments.csv': 'read',
  'GET /admin/exports/ledger.csv': 'read',
};

/** The audit action of the open state-changing route. */
const OPEN_ACTIONS: Readonly<Record<string, string>> = { 'POST /admin/chain-health': 'chain_health.insert' };

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
  return ACTIONS[route]?.permission ?? READS[route] ?? (verb === 'GET' ? 'read' : 'administer');
}

/** The action an audit record of this state-changing route names; null for reads. */
export function auditActionOf(method: string, routeUrl: string | undefined): string | null {
  if (method === 'GET' || method === 'HEAD' || method === 'OPTIONS') return null;
  const route = `${method} ${routeUrl ?? '(unknown route)'}`;
  return ACTIONS[route]?.action ?? OPEN_ACTIONS[route] ?? route;
}

export function roleMay(role: OperatorRole, permission: Permission): boolean {
  return ROLE_PERMISSIONS[role].has(permission);
}
