// The transition table, whole: every (from, to) pair of statuses is either allowed or refused, as listed here.
import { describe, expect, it } from 'vitest';
import {
  canTransition,
  IllegalTransitionError,
  isTerminal,
  OPEN_STATUSES,
  PAYMENT_STATUSES,
  transition,
  type PaymentStatus,
} from '../../src/domain/payment-intent.js';

const ALLOWED: Record<PaymentStatus, PaymentStatus[]> = {
  created: ['quoted', 'failed', 'cancelled'],
  quoted: ['route_selected', 'expired', 'failed', 'cancelled'],
  route_selected: ['broadcasting', 'broadcasted', 'failed', 'cancelled', 'manual_review'],
  broadcasting: ['broadcasted', 'retrying', 'failed', 'manual_review'],
  retrying: ['broadcasting', 'failed', 'manual_review', 'cancelled'],
  // An on-chain batch that can never land: each of its payments is tried again alone (decision 176).
  broadcasted: ['pending_confirmation', 'settled', 'failed', 'manual_review', 'retrying'],
  pending_confirmation: ['settled', 'failed', 'manual_review', 'retrying'],
  manual_review: ['settled', 'failed', 'broadcasted', 'retrying'],
  settled: [],
  failed: [],
  expired: [],
  cancelled: [],
};

describe('payment intent transitions', () => {
  const pairs = PAYMENT_STATUSES.flatMap((from) => PAYMENT_STATUSES.map((to) => [from, to] as const));

  it.each(pairs)('%s -> %s', (from, to) => {
    const allowed = ALLOWED[from].includes(to);
    expect(canTransition(from, to)).toBe(allowed);
    if (allowed) expect(transition(from, to)).toBe(to);
    else expect(() => transition(from, to)).toThrow(IllegalTransitionError);
  });

  it('has the spec statuses, and the terminal ones lead nowhere', () => {
    expect([...PAYMENT_STATUSES].sort()).toEqual(Object.keys(ALLOWED).sort());
    for (const status of PAYMENT_STATUSES) {
      expect(isTerminal(status)).toBe(ALLOWED[status].length === 0);
      expect(OPEN_STATUSES.includes(status)).toBe(ALLOWED[status].length > 0);
    }
  });

  it('every shown "before settlement" state can fail (spec: any state before settlement -> failed)', () => {
    for (const status of ['created', 'quoted', 'route_selected', 'broadcasting', 'retrying', 'broadcasted', 'pending_confirmation', 'manual_review'] as const) {
      expect(canTransition(status, 'failed')).toBe(true);
    }
  });
});
