// Payment-intent states and the one function that allows a status change. Transitions only move forward.

export const PAYMENT_STATUSES = [
  'created',
  'quoted',
  'route_selected',
  'broadcasting',
  'broadcasted',
  'pending_confirmation',
  'settled',
  'failed',
  'manual_review',
  'retrying',
  'expired',
  'cancelled',
] as const;
export type PaymentStatus = (typeof PAYMENT_STATUSES)[number];

export const TERMINAL_STATUSES: readonly PaymentStatus[] = ['settled', 'failed', 'expired', 'cancelled'];
/** Statuses counted as "pending" in the admin overview: neither settled nor failed. */
export const OPEN_STATUSES: readonly PaymentStatus[] = PAYMENT_STATUSES.filter(
  (s) => !TERMINAL_STATUSES.includes(s),
);

const TRANSITIONS: Record<PaymentStatus, readonly PaymentStatus[]> = {
  created: ['quoted', 'failed', 'cancelled'],
  quoted: ['route_selected', 'expired', 'failed', 'cancelled'],
  // manual_review: the execution was abandoned before anything was signed (decision 58).
  route_selected: ['broadcasting', 'broadcasted', 'failed', 'cancelled', 'manual_review'],
  broadcasting: ['broadcasted', 'retrying', 'failed', 'manual_review'],
  retrying: ['broadcasting', 'failed', 'manual_review', 'cancelled'],
  // retrying: the on-chain batch that paid it can never land, and each of its payments is tried again alone.
  broadcasted: ['pending_confirmation', 'settled', 'failed', 'manual_review', 'retrying'],
  pending_confirmation: ['settled', 'failed', 'manual_review', 'retrying'],
  // An operator resolves manual review: settled after an outside check, failed with funds released, a fee-bumped
  // replacement that is watched again, or (nothing on chain) one more execution attempt.
  manual_review: ['settled', 'failed', 'broadcasted', 'retrying'],
  settled: [],
  failed: [],
  expired: [],
  cancelled: [],
};

export class IllegalTransitionError extends Error {
  override readonly name = 'IllegalTransitionError';
  constructor(
    readonly from: PaymentStatus,
    readonly to: PaymentStatus,
  ) {
    super(`illegal payment intent transition ${from} -> ${to}`);
  }
}

export function canTransition(from: PaymentStatus, to: PaymentStatus): boolean {
  return TRANSITIONS[from].includes(to);
}

/** Returns `to` when the move is allowed; throws otherwise, because an illegal transition is a bug. */
export function transition(from: PaymentStatus, to: PaymentStatus): PaymentStatus {
  if (!canTransition(from, to)) throw new IllegalTransitionError(from, to);
  return to;
}

export function isTerminal(status: PaymentStatus): boolean {
  return TERMINAL_STATUSES.includes(status);
}
