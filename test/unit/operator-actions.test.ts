// What the console offers for a payment: by status, by whether a transfer may still land, by whether the chain can
// re-sign with a higher fee. The use cases still refuse what the chain contradicts; this only decides what is shown.
import { describe, expect, it } from 'vitest';
import { operatorActions } from '../../src/domain/operator-actions.js';
import { PAYMENT_STATUSES } from '../../src/domain/payment-intent.js';

describe('operatorActions', () => {
  it.each([
    [true, true, ['settled', 'failed', 'replace']],
    [true, false, ['settled', 'failed']],
    [false, true, ['failed', 'retry']],
    [false, false, ['failed', 'retry']],
  ] as const)('manual_review with a live transfer %s, replaceable %s: %j', (live, replaceable, expected) => {
    expect(operatorActions('manual_review', replaceable, live)).toEqual({ resolve: expected, cancel: false });
  });

  it.each(PAYMENT_STATUSES.filter((s) => s !== 'manual_review'))('%s offers no resolution', (status) => {
    const actions = operatorActions(status, true, false);
    expect(actions.resolve).toEqual([]);
    expect(actions.cancel).toBe(status === 'route_selected' || status === 'retrying');
  });
});
