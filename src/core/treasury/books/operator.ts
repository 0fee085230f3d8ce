// What an operator does about a chain held because the books are behind it (decision 200): attach an unknown treasury
// transaction to the payments it paid, or declare it (or an EVM nonce used with no transaction found) foreign. Either
// makes the books know it; the next check then finds nothing unknown and lifts the hold by itself: no command resumes a
// chain. Both are checked against what the last check saw on chain (the hold's findings), never the operator's word,
// and recorded in the audit log in their own transaction.
//
// Attach records the transaction as each payment's attempt, broadcast (its bytes as the chain has them), debits the
// payment as a signature does, and moves it to broadcasted: the confirmation worker then settles it from the chain,
// with its share of the fee, and the execution job still queued for it finds it handled. Foreign takes two different
// operators (named ones where only they count, decision 180): it lets a payout the transaction may have paid go out.
import { audited, type AuditEntry } from '../../operators/audit.js';
import { withTransaction, type Queryable } from '../../../db/pool.js';
import { insertAttempts, markBroadcasted } from '../../../db/queries/attempts.js';
import {
  markForeignApproved,
  listAttachCandidates,
  insertForeign,
  lockForeign,
  listOpenHolds,
  listRecentHolds,
  type HoldRow,
  type StoredFindings,
} from '../../../db/queries/books.js';
import { lockIntents } from '../../../db/queries/intents.js';
import { sameAddress } from '../../../domain/addresses.js';
import { paymentsPaidBy, type FoundTransaction } from '../../../domain/books-check.js';
import { familyOf, type Chain } from '../../../domain/chain.js';
import { AppError } from '../../../domain/errors.js';
import { isNamedOperator } from '../../../domain/four-eyes.js';
import { newId } from '../../../ids.js';
import { movements } from '../../../ledger/movements.js';
import { intentsWithDebit, postMany } from '../../../ledger/store.js';
import type { AppContext } from '../../context.js';
import { moveAndTell } from '../../payments/outcomes/events.js';
import { namedOnly, type FourEyesConfig } from '../../operators/transitions/four-eyes.js';
import { currencyOf } from '../../../domain/token.js';

/** Holds listed by GET /admin/books and `books list`: the open ones first, then the latest lifted. */
const HOLDS_LISTED_MAX = 20;

export type BooksOperatorDeps = Pick<AppContext, 'pool' | 'clock'> & { config: FourEyesConfig & Pick<AppContext['config'], 'audit' | 'chainNames'> };

export function holdView(hold: HoldRow) {
  return {
    id: hold.id,
    chain: hold.chain,
    state: hold.state,
    opened_at: hold.opened_at.toISOString(),
    history_from: hold.history_from,
    history_to: hold.history_to,
    checked_at: hold.checked_at?.toISOString() ?? null,
    lifted_at: hold.lifted_at?.toISOString() ?? null,
    lifted_by: hold.lifted_by,
    unknown_transactions: (hold.findings?.unknown ?? []).map(({ signed: _signed, ...found }) => found),
    unknown_nonces: hold.findings?.unknown_nonces ?? [],
    incomplete: hold.findings?.incomplete ?? false,
  };
}

export async function listHolds(db: Queryable): Promise<ReturnType<typeof holdView>[]> {
  return (await listRecentHolds(db, HOLDS_LISTED_MAX)).map(holdView);
}

/** The chain's open hold, locked, with what its last check found; refused when there is nothing to account for. */
async function heldFindings(tx: Queryable, chain: Chain): Promise<StoredFindings> {
  const hold = (await listOpenHolds(tx, [chain], { forUpdate: true }))[0];
  if (!hold?.findings) throw new AppError('INVALID_STATE', `${chain} has no transaction to account for: its books are not behind the chain (GET /admin/books)`);
  return hold.findings;
}

function foundOf(stored: StoredFindings['unknown'][number]): FoundTransaction {
  return {
    txId: stored.tx_id,
    nonce: stored.nonce,
    failed: stored.failed,
    memo: stored.memo,
    transfers: stored.transfers.map((t) => ({ to: t.to, amountMicros: BigInt(t.amount_micros) })),
  };
}

export interface AttachResult {
  chain: Chain;
  tx_id: string;
  payment_intent_ids: string[];
}

/** Attaches the unknown transaction `txId` of held `chain` to the payments it paid (`named`, or found by the books). */
export async function attachUnknownTransaction(
  deps: BooksOperatorDeps,
  input: { chain: Chain; txId: string; payments: readonly string[] | null; audit: AuditEntry },
): Promise<AttachResult> {
  const { chain, txId } = input;
  return audited(deps, input.audit, deps.clock.now(), async (tx) => {
    const now = deps.clock.now();
    const stored = (await heldFindings(tx, chain)).unknown.find((u) => u.tx_id === txId);
    if (!stored) throw new AppError('NOT_FOUND', `the last check of ${chain} found no unknown transaction ${txId} (GET /admin/books lists them)`);
    if (!stored.signed) throw new AppError('INVALID_STATE', `the node did not return the bytes of ${txId}: declare it foreign once its payments are accounted for`);
    const found = foundOf(stored);
    const same = (a: string, b: string) => sameAddress(chain, a, b);
    const recipients = found.transfers.map((t) => t.to);
    const foldCase = familyOf(chain) === 'evm';
    const decide = async () => {
      const candidates = (await listAttachCandidates(tx, chain, recipients, foldCase)).map((c) => ({ id: c.id, to: c.to, amountMicros: BigInt(c.amount_micros) }));
      return paymentsPaidBy(found, candidates, input.payments, same);
    };
    const chosen = await decide();
    if (!chosen.ok) throw new AppError('INVALID_STATE', `cannot attach ${txId}: ${chosen.problem}`);
    // Under the payments' locks, decided again: an execution or an operator may have moved one meanwhile.
    const intents = await lockIntents(tx, chosen.payments);
    const again = await decide();
    if (!again.ok || again.payments.join() !== chosen.payments.join()) throw new AppError('INVALID_STATE', `${txId}: its payments changed meanwhile; try again`);
    const paid = chosen.payments.map((id) => intents.get(id)!);
    const attempts = paid.map((intent, index) => ({
      id: newId('att'),
      payment_intent_id: intent.id,
      chain,
      estimated_fee_usd: 0,
      created_at: now,
      tx_payments: paid.length,
      tx_payment_index: index,
      signed: stored.signed!,
    }));
    await insertAttempts(tx, attempts);
    await markBroadcasted(tx, attempts.map((a) => a.id), now);
    const debited = await intentsWithDebit(tx, chosen.payments);
    await postMany(
      tx,
      paid.filter((p) => !debited.has(p.id)).map((p) => ({ movement: movements.debit(chain, p.amount_micros, currencyOf(p.token)), context: { paymentIntentId: p.id, at: now } })),
    );
    // retrying reaches broadcasted through broadcasting, as a signature takes it there.
    await moveAndTell(tx, paid.filter((p) => p.status === 'retrying').map((intent) => ({ intent, to: 'broadcasting', type: 'payment.broadcasting' })), now);
    await moveAndTell(tx, paid.map((intent) => ({ intent, to: 'broadcasted', type: 'payment.broadcasted', extra: { tx_id: txId } })), now);
    return { chain, tx_id: txId, payment_intent_ids: chosen.payments };
  });
}

export interface ForeignResult {
  chain: Chain;
  tx_id: string | null;
  nonce: number | null;
  declared_by: string;
  approved_by: string;
}

/**
 * Declares an unknown transaction (or an EVM nonce the chain used with no transaction found) of held `chain` paid
 * none of our payments. The first operator's declaration is recorded and refused as pending (409
 * FOREIGN_DECLARATION_PENDING); a different operator's same declaration makes the books know it.
 */
export async function declareForeign(
  deps: BooksOperatorDeps,
  input: { chain: Chain; txId: string | null; nonce: number | null; reason: string; audit: AuditEntry },
): Promise<ForeignResult> {
  const { chain } = input;
  const key = input.txId ?? `nonce:${input.nonce}`;
  const actor = input.audit.actor.id;
  if (!isNamedOperator(actor) && (await namedOnly(deps.pool, deps.config))) {
    throw new AppError('NAMED_OPERATOR_REQUIRED', `declaring a treasury transaction foreign takes two people: ${actor} is not a named operator`);
  }
  const check = async (tx: Queryable) => {
    const findings = await heldFindings(tx, chain);
    const found = input.txId !== null ? findings.unknown.find((u) => u.tx_id === input.txId) : null;
    const nonce = found ? found.nonce : input.nonce;
    if (input.txId !== null && !found) throw new AppError('NOT_FOUND', `the last check of ${chain} found no unknown transaction ${input.txId} (GET /admin/books)`);
    if (input.txId === null && !findings.unknown_nonces.includes(input.nonce!)) {
      throw new AppError('NOT_FOUND', `the last check of ${chain} found no unknown nonce ${input.nonce} (GET /admin/books)`);
    }
    return { nonce, declaration: await lockForeign(tx, chain, key) };
  };
  const first = await withTransaction(deps.pool, async (tx) => {
    const { nonce, declaration } = await check(tx);
    if (declaration !== null) return declaration;
    await insertForeign(tx, { chain, txId: key, nonce, reason: input.reason, declaredBy: actor, at: deps.clock.now() });
    return null;
  });
  if (first === null) {
    throw new AppError('FOREIGN_DECLARATION_PENDING', `${chain} ${key}: your declaration is recorded; a different operator must make the same declaration`);
  }
  if (first.declared_by === actor && first.approved_at === null) {
    throw new AppError('SELF_APPROVAL', `${actor} already declared ${key} foreign; a different operator must make the same declaration`);
  }
  return audited(deps, input.audit, deps.clock.now(), async (tx) => {
    const { nonce, declaration } = await check(tx);
    if (declaration === null) throw new AppError('INVALID_STATE', `${key}: the declaration went away meanwhile; try again`);
    if (declaration.approved_at === null) await markForeignApproved(tx, chain, key, actor, deps.clock.now());
    return { chain, tx_id: input.txId, nonce, declared_by: declaration.declared_by, approved_by: declaration.approved_by ?? actor };
  });
}
