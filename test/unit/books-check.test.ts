// The pure decisions of issue 36 (decisions 198-201): whether the database's history changed, whether a held chain's
// treasury transactions are all in the books, which payments an unknown transaction paid, and whether the database
// keeps acknowledged commits through a failover.
import { describe, expect, it } from 'vitest';
import {
  historyChanged,
  matchTreasury,
  notSynchronousReason,
  paymentsPaidBy,
  type BooksCheckFacts,
  type FoundTransaction,
} from '../../src/domain/books-check.js';

const tx = (txId: string, extra: Partial<FoundTransaction> = {}): FoundTransaction => ({
  txId,
  nonce: null,
  failed: false,
  transfers: [{ to: 'R1', amountMicros: 1_000_000n }],
  memo: null,
  ...extra,
});

const facts = (extra: Partial<BooksCheckFacts> = {}): BooksCheckFacts => ({
  transactions: [],
  complete: true,
  nonces: null,
  quiet: true,
  known: new Set(),
  highestKnownNonce: null,
  foreignNonces: new Set(),
  ...extra,
});

describe('the database history', () => {
  const history = { systemIdentifier: '7715979687944161433', timeline: 1n };
  it('is unchanged on the same system and timeline only', () => {
    expect(historyChanged(history, { ...history })).toBe(false);
    expect(historyChanged(history, { ...history, timeline: 2n }), 'a promoted standby').toBe(true);
    expect(historyChanged(history, { ...history, systemIdentifier: '7715979687944161434' }), 'another cluster, a restore').toBe(true);
    expect(historyChanged(null, history), 'books that never recorded one').toBe(true);
  });
});

describe('matching a held chain against the books', () => {
  it('resumes when every treasury transaction is known and nothing signed before can still land', () => {
    expect(matchTreasury(facts({ transactions: [tx('a'), tx('b')], known: new Set(['a', 'b']) }), 10)).toEqual({ kind: 'matched' });
  });

  it('waits while a transaction signed before the hold could still land unseen', () => {
    expect(matchTreasury(facts({ transactions: [tx('a')], known: new Set(['a']), quiet: false }), 10)).toEqual({ kind: 'wait' });
  });

  it('is behind on a transaction the books do not know, landed or failed, quiet or not', () => {
    const unknown = tx('lost', { transfers: [] , failed: true });
    expect(matchTreasury(facts({ transactions: [tx('a'), unknown], known: new Set(['a']), quiet: false }), 10)).toEqual({
      kind: 'behind',
      unknown: [unknown],
      unknownNonces: [],
      incomplete: false,
    });
  });

  it('is behind when the walk back could not reach the books\u2019 landed transactions', () => {
    expect(matchTreasury(facts({ complete: false }), 10)).toMatchObject({ kind: 'behind', incomplete: true });
  });

  it('lists the EVM nonces the chain used or pooled beyond the books, but those of found transactions and foreign ones', () => {
    const found = tx('lost-5', { nonce: 5 });
    const verdict = matchTreasury(
      facts({ transactions: [found], nonces: { latest: 7, pending: 9 }, highestKnownNonce: 3, foreignNonces: new Set([7]) }),
      10,
    );
    expect(verdict).toEqual({ kind: 'behind', unknown: [found], unknownNonces: [4, 6, 8], incomplete: false });
  });

  it('never reuses a nonce: books that know nonces up to the chain\u2019s count (or beyond) match, none known count from 0', () => {
    expect(matchTreasury(facts({ nonces: { latest: 4, pending: 5 }, highestKnownNonce: 4 }), 10)).toEqual({ kind: 'matched' });
    expect(matchTreasury(facts({ nonces: { latest: 4, pending: 4 }, highestKnownNonce: 9 }), 10)).toEqual({ kind: 'matched' });
    expect(matchTreasury(facts({ nonces: { latest: 3, pending: 3 }, highestKnownNonce: null }), 10)).toMatchObject({ unknownNonces: [0, 1, 2] });
  });

  it('bounds the nonces it lists and then calls itself incomplete', () => {
    const verdict = matchTreasury(facts({ nonces: { latest: 100, pending: 100 }, highestKnownNonce: 0 }), 5);
    expect(verdict).toEqual({ kind: 'behind', unknown: [], unknownNonces: [1, 2, 3, 4, 5], incomplete: true });
  });
});

describe('the payments an unknown transaction paid', () => {
  const exact = (a: string, b: string) => a === b;
  const folded = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();

  it('is the only unsigned payment to the same recipient for the same amount, per transfer, in the transaction\u2019s order', () => {
    const batch = tx('t', { transfers: [{ to: 'B', amountMicros: 2n }, { to: 'A', amountMicros: 1n }], memo: 'batch:abc' });
    const candidates = [
      { id: 'pi_a', to: 'A', amountMicros: 1n },
      { id: 'pi_b', to: 'B', amountMicros: 2n },
      { id: 'pi_other', to: 'A', amountMicros: 3n },
    ];
    expect(paymentsPaidBy(batch, candidates, null, exact)).toEqual({ ok: true, payments: ['pi_b', 'pi_a'] });
  });

  it('follows the memo of a transaction of one payout where two payments look alike', () => {
    const candidates = [
      { id: 'pi_1', to: 'R1', amountMicros: 1_000_000n },
      { id: 'pi_2', to: 'R1', amountMicros: 1_000_000n },
    ];
    expect(paymentsPaidBy(tx('t', { memo: 'pi_2' }), candidates, null, exact)).toEqual({ ok: true, payments: ['pi_2'] });
    expect(paymentsPaidBy(tx('t'), candidates, null, exact)).toMatchObject({ ok: false, problem: expect.stringContaining('name the payment') });
    expect(paymentsPaidBy(tx('t'), candidates, ['pi_1'], exact)).toEqual({ ok: true, payments: ['pi_1'] });
  });

  it('compares EVM recipients without case', () => {
    const evm = tx('0xabc', { transfers: [{ to: '0xAbCd', amountMicros: 5n }] });
    expect(paymentsPaidBy(evm, [{ id: 'pi_e', to: '0xabcd', amountMicros: 5n }], null, folded)).toEqual({ ok: true, payments: ['pi_e'] });
    expect(paymentsPaidBy(evm, [{ id: 'pi_e', to: '0xabcd', amountMicros: 5n }], null, exact).ok).toBe(false);
  });

  it('never takes the operator\u2019s word: a named payment that is no candidate, a wrong count, no candidate at all are refused', () => {
    const candidates = [{ id: 'pi_1', to: 'R1', amountMicros: 1_000_000n }];
    expect(paymentsPaidBy(tx('t'), candidates, ['pi_9'], exact)).toMatchObject({ ok: false, problem: expect.stringContaining('pi_9 is not') });
    expect(paymentsPaidBy(tx('t'), candidates, ['pi_1', 'pi_2'], exact)).toMatchObject({ ok: false, problem: expect.stringContaining('name as many') });
    expect(paymentsPaidBy(tx('t', { transfers: [{ to: 'R2', amountMicros: 1_000_000n }] }), candidates, null, exact)).toMatchObject({ ok: false });
    expect(paymentsPaidBy(tx('t', { memo: 'pi_gone' }), candidates, null, exact)).toMatchObject({ ok: false, problem: expect.stringContaining('its memo') });
  });

  it('pays one payment once: a batch with two alike transfers needs two payments', () => {
    const twice = tx('t', { transfers: [{ to: 'R1', amountMicros: 1n }, { to: 'R1', amountMicros: 1n }], memo: 'batch:x' });
    expect(paymentsPaidBy(twice, [{ id: 'pi_1', to: 'R1', amountMicros: 1n }], null, exact).ok).toBe(false);
  });

  it('refuses a transaction that paid nothing: it is declared foreign instead', () => {
    expect(paymentsPaidBy(tx('t', { failed: true }), [], null, exact)).toMatchObject({ ok: false, problem: expect.stringContaining('foreign') });
    expect(paymentsPaidBy(tx('t', { transfers: [] }), [], null, exact)).toMatchObject({ ok: false, problem: expect.stringContaining('foreign') });
  });
});

describe('whether the database keeps acknowledged commits through a failover', () => {
  const sync = { synchronousStandbyNames: 'standby', synchronousCommit: 'on', synchronousStandbys: 1 };
  it('does with a synchronous standby named and commits that wait for it', () => {
    expect(notSynchronousReason(sync)).toBeNull();
    expect(notSynchronousReason({ ...sync, synchronousCommit: 'remote_apply' })).toBeNull();
    expect(notSynchronousReason({ ...sync, synchronousStandbys: null }), 'pg_stat_replication not readable by this role').toBeNull();
  });
  it('does not otherwise, and says why', () => {
    expect(notSynchronousReason({ ...sync, synchronousStandbyNames: '' })).toContain('synchronous_standby_names is empty');
    expect(notSynchronousReason({ ...sync, synchronousCommit: 'local' })).toContain('synchronous_commit is local');
    expect(notSynchronousReason({ ...sync, synchronousCommit: 'off' })).toContain('synchronous_commit is off');
    expect(notSynchronousReason({ ...sync, synchronousStandbys: 0 })).toContain('no synchronous standby is connected');
  });
});
