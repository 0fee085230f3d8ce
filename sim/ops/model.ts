// What the simulator remembers of the run, in the order it made things: the quotes it holds, every payment it
// created (by its index, the order of creation, never by the service's ids, which are random), every idempotency key
// with the body it was first sent with and the payment it answered. Operations choose their targets by index into
// these lists, or into lists read from the database and sorted by these indexes, so one seed picks the same targets.
import type { Chain } from '../../src/domain/chain.js';

export interface HeldQuote {
  id: string;
  amountUsd: number;
  chain: Chain | null;
}

export interface KnownPayment {
  /** Its place in the run's order of creation. */
  index: number;
  id: string;
  kind: 'payment' | 'withdrawal';
  amountMicros: bigint;
}

export interface KeyUse {
  key: string;
  quoteId: string;
  paymentId: string;
}

export interface Model {
  quotes: HeldQuote[];
  payments: KnownPayment[];
  byId: Map<string, KnownPayment>;
  keys: KeyUse[];
  /** Counters for the names the simulator gives (idempotency keys, batch keys). */
  names: number;
}

export function createModel(): Model {
  return { quotes: [], payments: [], byId: new Map(), keys: [], names: 0 };
}

export function remember(model: Model, payment: Omit<KnownPayment, 'index'>): KnownPayment {
  const known = model.byId.get(payment.id);
  if (known) return known;
  const added = { ...payment, index: model.payments.length };
  model.payments.push(added);
  model.byId.set(added.id, added);
  return added;
}

/** The ids given, in the run's order of creation (ids the run never made go last, by id). */
export function inRunOrder(model: Model, ids: readonly string[]): string[] {
  const at = (id: string) => model.byId.get(id)?.index ?? Number.MAX_SAFE_INTEGER;
  return [...ids].sort((a, b) => at(a) - at(b) || (a < b ? -1 : a > b ? 1 : 0));
}

/** The target a raw draw names among `items`: the draw is made whatever the list holds, so draws never shift. */
export function chosen<T>(items: readonly T[], draw: number): T | undefined {
  return items.length === 0 ? undefined : items[draw % items.length];
}
