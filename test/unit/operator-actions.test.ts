// What the console offers for a payment: by status, by what its live transaction is (its transfer, a cancel on chain,
// none), by what the chain can do (re-sign with a higher fee, cancel on chain). And when the chain contradicts an
// operator: `failed` releases funds only for transfers that provably never land.
import { describe, expect, it } from 'vitest';
import type { TxStatus } from '../../src/domain/chain.js';
import { operatorActions, refusalOf, type Resolution } from '../../src/domain/operator-actions.js';
import { PAYMENT_STATUSES } from '../../src/domain/payment-intent.js';
import { transferVerdict } from '../../src/domain/transfer-verdict.js';

const both = { replace: true, cancelOnChain: true };
const neither = { replace: false, cancelOnChain: false };

describe('operatorActions', () => {
  it.each([
    ['transfer', both, ['settled', 'failed', 'replace', 'cancel_on_chain']],
    ['transfer', neither, ['settled', 'failed']],
    ['cancel', both, ['failed', 'cancel_on_chain']],
    [null, both, ['failed', 'retry']],
    [null, neither, ['failed', 'retry']],
  ] as const)('manual_review with a live %s, chain abilities %j: %j', (live, chain, expected) => {
    expect(operatorActions('manual_review', chain, live)).toEqual({ resolve: expected, cancel: false });
  });

  it.each(PAYMENT_STATUSES.filter((s) => s !== 'manual_review'))('%s offers no resolution', (status) => {
    const actions = operatorActions(status, both, null);
    expect(actions.resolve).toEqual([]);
    expect(actions.cancel).toBe(status === 'route_selected' || status === 'retrying');
  });
});

describe('refusalOf', () => {
  const eth = (status: TxStatus | null) => transferVerdict(status, { chain: 'ethereum' });
  const unknown = eth({ state: 'unknown' });
  const taken = eth({ state: 'failed', reason: 'nonce_conflict', feeNative: 0n, details: 'nonce used' });
  const final = eth({ state: 'final', feeNative: 21_000n });
  const pending = eth({ state: 'pending' });
  const refusal = (resolution: Resolution, ...seen: [ 'transfer' | 'cancel', ReturnType<typeof eth>][]) =>
    refusalOf(resolution, 'ethereum', seen.map(([purpose, verdict]) => ({ purpose, verdict })));

  it('failed: a transfer our node forgot may still land (an Ethereum transaction never expires): refused, forceable', () => {
    expect(refusal('failed', ['transfer', unknown])).toMatchObject({ code: 'TRANSFER_MAY_STILL_LAND', forceable: true });
    expect(refusal('failed', ['transfer', unknown])!.reason).toMatch(/cancel it on chain/);
    expect(refusalOf('failed', 'solana', [{ purpose: 'transfer', verdict: transferVerdict({ state: 'unknown' }, { chain: 'solana' }) }])!.reason).toMatch(
      /blockhash/,
    );
  });

  it('failed: accepted once every transaction on the nonce provably never lands, or the cancel is final', () => {
    expect(refusal('failed', ['transfer', taken])).toBeNull();
    expect(refusal('failed', ['cancel', final], ['transfer', taken])).toBeNull();
    expect(refusal('failed')).toBeNull(); // nothing was ever signed
  });

  it('failed: refused while the cancel is not final, or while the transfer it replaced landed', () => {
    expect(refusal('failed', ['cancel', pending], ['transfer', unknown])).toMatchObject({ code: 'TRANSFER_MAY_STILL_LAND' });
    expect(refusal('failed', ['cancel', taken], ['transfer', final])).toMatchObject({ code: 'INVALID_STATE' });
    expect(refusal('failed', ['transfer', pending])).toMatchObject({ code: 'INVALID_STATE', forceable: true });
    expect(refusal('failed', ['transfer', eth(null)])).toMatchObject({ code: 'INVALID_STATE', forceable: true });
  });

  it('cancel_on_chain: a transfer (or cancel) not in a block yet; nothing else, whatever the force', () => {
    expect(refusal('cancel_on_chain', ['transfer', unknown])).toBeNull();
    expect(refusal('cancel_on_chain', ['transfer', pending])).toBeNull();
    expect(refusal('cancel_on_chain', ['cancel', unknown], ['transfer', unknown])).toBeNull();
    for (const verdict of [final, eth({ state: 'included', confirmations: 1 }), taken, eth(null)]) {
      expect(refusal('cancel_on_chain', ['transfer', verdict])).toMatchObject({ code: 'INVALID_STATE', forceable: false });
    }
    expect(refusal('cancel_on_chain', ['cancel', unknown], ['transfer', final])).toMatchObject({ forceable: false });
  });

  it('settled and replace do not apply to a cancel on chain', () => {
    expect(refusal('settled', ['cancel', final])).toMatchObject({ code: 'INVALID_STATE', forceable: false });
    expect(refusal('replace', ['cancel', pending])).toMatchObject({ code: 'INVALID_STATE', forceable: false });
    expect(refusal('settled', ['transfer', unknown])).toBeNull();
    expect(refusal('settled', ['transfer', taken])).toMatchObject({ code: 'INVALID_STATE', forceable: true });
  });
});
