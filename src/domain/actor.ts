// Who did something (STYLE habit 11): an operator by id, the break-glass ADMIN_TOKEN, the CLI's OS user, or, in
// development only, an anonymous caller on loopback. Carried into the transaction of every operator action.
/** An operator's role (decision 101): what the admin routes it may call are, in src/api/admin-access.ts. */
export type OperatorRole = 'viewer' | 'operator' | 'approver' | 'admin';

export interface Actor {
  /**
   * op_... for an operator; `break-glass` (ADMIN_TOKEN); `cli:<os user>`; `local` (development, loopback, no
   * credentials); `anonymous` (the spec's open admin endpoints, called without credentials).
   */
  id: string;
  /** Null for `anonymous`. */
  role: OperatorRole | null;
  /** The peer's address for HTTP requests; null for the CLI. */
  peer: string | null;
}
