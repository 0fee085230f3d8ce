// What the books decide about a database they find themselves on (issue 36, decisions 198-200). Pure: the facts are
// read by src/core/treasury/books and handed in.

/** A database's history: its system identifier and the timeline it writes on (decision 198). */
export interface DatabaseHistory {
  systemIdentifier: string;
  timeline: bigint;
}

export function historyText(history: DatabaseHistory | null): string {
  return history === null ? 'none' : `${history.systemIdentifier}/${history.timeline}`;
}

/** Whether the books were last written on another history than the database's now: every chain's signing is held. */
export function historyChanged(stored: DatabaseHistory | null, current: DatabaseHistory): boolean {
  return stored === null || stored.systemIdentifier !== current.systemIdentifier || stored.timeline !== current.timeline;
}

/** A treasury transaction a check found, in the terms the books keep (amounts as bigint micro-units). */
export interface FoundTransaction {
  txId: string;
  nonce: number | null;
  failed: boolean;
  transfers: { to: string; amountMicros: bigint }[];
  memo: string | null;
}

/** What one check of a held chain read: the chain's side (the adapter) and the books' side. */
export interface BooksCheckFacts {
  /** Oldest first: the treasury's own transactions since the newest the books hold as landed. */
  transactions: readonly FoundTransaction[];
  /** The walk back reached a landed transaction of the books (or the start of the treasury's history). */
  complete: boolean;
  /** EVM: the treasury's transaction count, mined and with the pool's pending ones. */
  nonces: { latest: number; pending: number } | null;
  /** Nothing signed before the hold can still land unseen. */
  quiet: boolean;
  /** Of `transactions`, the tx ids the books know: an attempt's, or one an operator declared foreign. */
  known: ReadonlySet<string>;
  /** EVM: the highest nonce the books' attempts used, null when none. */
  highestKnownNonce: number | null;
  /** EVM: nonces above it an operator declared foreign. */
  foreignNonces: ReadonlySet<number>;
}

export type BooksVerdict =
  /** Every transaction of the treasury is in the books: signing resumes. */
  | { kind: 'matched' }
  /** Nothing unknown so far, but a transaction signed before the hold could still land: look again. */
  | { kind: 'wait' }
  /** The chain moved without the books: the chain stays held, an operator accounts for what the books lack. */
  | { kind: 'behind'; unknown: FoundTransaction[]; unknownNonces: number[]; incomplete: boolean };

/**
 * Matches what the chain has against what the books know. An unknown transaction or nonce is a fact the books must
 * account for (attached to the payment it paid, or declared foreign), never a nonce to hand out again or a payment to
 * pay again; a walk that did not reach the books' landed transactions cannot clear the chain either.
 */
export function matchTreasury(facts: BooksCheckFacts, noncesListedMax: number): BooksVerdict {
  const unknown = facts.transactions.filter((t) => !facts.known.has(t.txId));
  const unknownNonces: number[] = [];
  let incomplete = !facts.complete;
  if (facts.nonces !== null) {
    // Nonces past the highest the books know that the chain used or pooled, bar those of unknown transactions found
    // (reported with their transaction) and those declared foreign.
    const found = new Set(unknown.flatMap((t) => (t.nonce === null ? [] : [t.nonce])));
    const from = facts.highestKnownNonce === null ? 0 : facts.highestKnownNonce + 1;
    for (let nonce = from; nonce < facts.nonces.pending; nonce++) {
      if (found.has(nonce) || facts.foreignNonces.has(nonce)) continue;
      if (unknownNonces.length === noncesListedMax) {
        incomplete = true;
        break;
      }
      unknownNonces.push(nonce);
    }
  }
  if (unknown.length > 0 || unknownNonces.length > 0 || incomplete) return { kind: 'behind', unknown, unknownNonces, incomplete };
  return facts.quiet ? { kind: 'matched' } : { kind: 'wait' };
}

/** The operator alert's text for a chain the books are behind. */
export function behindMessage(chain: string, verdict: Extract<BooksVerdict, { kind: 'behind' }>): string {
  const parts = [
    verdict.unknown.length > 0 ? `${verdict.unknown.length} treasury transaction(s) the books do not know` : null,
    verdict.unknownNonces.length > 0 ? `${verdict.unknownNonces.length} nonce(s) used that the books never allocated` : null,
    verdict.incomplete ? 'the check could not reach the books\u2019 last landed transaction' : null,
  ].filter((p) => p !== null);
  return `${chain}: signing held after a change of database history: ${parts.join('; ')}. Attach each to the payments it paid or declare it foreign (stableroute books).`;
}

/** Where the database's replication stands, as its settings and pg_stat_replication say. */
export interface ReplicationFacts {
  synchronousStandbyNames: string;
  synchronousCommit: string;
  /** Standbys pg_stat_replication lists as sync or quorum (null when this role may not read it). */
  synchronousStandbys: number | null;
}

/**
 * Whether a commit the service was told about is on a standby before it returns: synchronous_standby_names names one
 * and synchronous_commit waits for it (on, remote_write, remote_apply). Null when it is; otherwise why not.
 */
export function notSynchronousReason(facts: ReplicationFacts): string | null {
  if (facts.synchronousStandbyNames.trim() === '') return 'synchronous_standby_names is empty: a failover can lose acknowledged commits';
  if (!['on', 'remote_write', 'remote_apply'].includes(facts.synchronousCommit)) {
    return `synchronous_commit is ${facts.synchronousCommit}: commits return before a standby has them`;
  }
  if (facts.synchronousStandbys === 0) return 'no synchronous standby is connected: commits wait until one is';
  return null;
}

/** A payment the books could attach a found transfer to: on the transaction's chain, never signed, not final. */
export interface AttachCandidate {
  id: string;
  to: string;
  amountMicros: bigint;
}

/**
 * The payments an unknown transaction paid, one per transfer in its order (decision 200): those the operator names
 * (each must be a candidate of its transfer), or else the only candidate of each transfer (to the same address, the
 * same amount; a transaction of one payout names its payment in its memo, which must then be that candidate). Never on
 * the operator's word alone: a name that is no candidate is refused, as is a transfer with none or several.
 */
export function paymentsPaidBy(
  tx: FoundTransaction,
  candidates: readonly AttachCandidate[],
  named: readonly string[] | null,
  sameAddress: (a: string, b: string) => boolean,
): { ok: true; payments: string[] } | { ok: false; problem: string } {
  if (tx.failed) return { ok: false, problem: `${tx.txId} failed on chain and paid nothing: declare it foreign` };
  if (tx.transfers.length === 0) return { ok: false, problem: `${tx.txId} moved no USDC: declare it foreign` };
  if (named !== null && named.length !== tx.transfers.length) {
    return { ok: false, problem: `${tx.txId} pays ${tx.transfers.length} recipient(s): name as many payments, in its order` };
  }
  const memoId = tx.transfers.length === 1 && tx.memo !== null && !tx.memo.startsWith('batch:') ? tx.memo : null;
  const used = new Set<string>();
  const payments: string[] = [];
  for (const [i, transfer] of tx.transfers.entries()) {
    const fits = candidates.filter((c) => !used.has(c.id) && c.amountMicros === transfer.amountMicros && sameAddress(c.to, transfer.to));
    const what = `its transfer of ${transfer.amountMicros} micro-USDC to ${transfer.to}`;
    const chosen = named !== null ? fits.filter((c) => c.id === named[i]) : memoId !== null ? fits.filter((c) => c.id === memoId) : fits;
    if (chosen.length === 0) {
      const wanted = named !== null ? `${named[i]} is not` : memoId !== null ? `${memoId} (its memo) is not` : 'no payment is';
      return { ok: false, problem: `${wanted} an unsigned payment of the books matching ${what}` };
    }
    if (chosen.length > 1) return { ok: false, problem: `${what} matches ${chosen.map((c) => c.id).join(', ')}: name the payment it paid` };
    used.add(chosen[0]!.id);
    payments.push(chosen[0]!.id);
  }
  return { ok: true, payments };
}
