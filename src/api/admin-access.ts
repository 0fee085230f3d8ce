// Who may call which admin route: the one table to audit (decision 170). A route not listed here needs credentials,
// so a route added later is closed until someone decides otherwise.
import { CONSOLE_PATH } from './routes/console.js';

/**
 * open: the spec's four admin endpoints, which need no credentials (spec, Authentication 5).
 * page: the console's static files, which hold no data (the page asks for a token before it reads anything).
 * credentials: everything else: every read of payments, treasury and merchants, and every action that moves money
 * or changes a payment, a policy or an address book.
 */
export type AdminAccess = 'open' | 'page' | 'credentials';

const OPEN_ROUTES: ReadonlySet<string> = new Set([
  'GET /admin/overview',
  'GET /admin/route-distribution',
  'GET /admin/failures',
  'POST /admin/chain-health',
]);

/** The access of a route, by its method and its declared URL (`request.routeOptions.url`, parameters unfilled). */
export function adminAccessOf(method: string, routeUrl: string | undefined): AdminAccess {
  if (routeUrl === undefined) return 'credentials';
  const verb = method === 'HEAD' ? 'GET' : method;
  if (OPEN_ROUTES.has(`${verb} ${routeUrl}`)) return 'open';
  if (verb === 'GET' && (routeUrl === CONSOLE_PATH || routeUrl.startsWith(`${CONSOLE_PATH}/`))) return 'page';
  return 'credentials';
}
