// The operator's actions on a payment (resolve settled / failed / replace / retry / cancel on chain, cancel), each
// behind a confirmation, offered only to roles with the operate permission. They POST to /admin/payments/:id/resolve or /cancel, which run the same use cases and chain
// checks as the CLI; a refusal (409 INVALID_STATE or TRANSFER_MAY_STILL_LAND with the chain's reason) is shown in the
// dialog, where the operator may force it.
import { html } from './html.js';
import { useState } from 'preact/hooks';
import { post } from './api.js';
import { chainLabel } from './chains.js';
import { ConfirmDialog } from './components.js';
import { usd } from './format.js';
import { useCan } from './session.js';

const ACTIONS = {
  settled: {
    button: 'Mark settled',
    title: 'Mark this payment settled?',
    confirm: 'Mark settled',
    tone: 'primary',
    text: 'Books the payout as done: the in-flight USDC leaves the treasury, the chain’s fee is booked and payment.settled is sent to the merchant. The chain is asked first: this is refused if it reports that the transfer can never land.',
  },
  failed: {
    button: 'Mark failed',
    title: 'Mark this payment failed?',
    confirm: 'Mark failed',
    tone: 'danger',
    text: 'Fails the payment and returns its USDC to available; payment.failed is sent to the merchant. The chain is asked first: this is refused until it proves the transfer can never land (on an EVM chain: its nonce used at final depth, e.g. by a final cancel on chain), because the payout may still happen.',
  },
  replace: {
    button: 'Replace with higher fee',
    title: 'Replace the stuck transfer?',
    confirm: 'Sign and send replacement',
    tone: 'primary',
    text: 'Signs the same transfer again with a higher fee and the same nonce and sends it; whichever of the two lands, only one payout happens. The payment goes back to broadcasted and is watched again.',
  },
  retry: {
    button: 'Retry execution',
    title: 'Run this payment once more?',
    confirm: 'Retry execution',
    tone: 'primary',
    text: 'Its execution was abandoned before anything reached the chain; its USDC is still reserved. The payment goes back to retrying and is signed and sent once more. Refused if a transfer of it appears that may still land.',
  },
  cancel_on_chain: {
    button: 'Cancel on chain',
    title: 'Cancel the stuck transfer on chain?',
    confirm: 'Sign and send cancel',
    tone: 'danger',
    text: 'Signs a transaction that moves nothing (zero of the chain’s native currency from the treasury to itself) on the stuck transfer’s nonce with a higher fee, and sends it. Whichever of the two lands, the other never can. Once the cancel is final the payment fails, its USDC returns to available and payment.failed is sent; if the transfer lands instead, it settles. Its gas is booked as a fee.',
  },
  cancel: {
    button: 'Cancel payment',
    title: 'Cancel this payment?',
    confirm: 'Cancel payment',
    tone: 'danger',
    text: 'Cancels a payment that has not reached the chain and releases its reserved USDC. Refused if a transaction of it may still land. No webhook is sent; the merchant sees the status on read.',
  },
};

export function PaymentActions({ payment, onDone, compact = false }) {
  const [open, setOpen] = useState(null);
  const canOperate = useCan('operate');
  const available = [...(payment.actions?.resolve ?? []), ...(payment.actions?.cancel ? ['cancel'] : [])];
  if (available.length === 0) return compact ? null : html`<p class="muted">No operator action applies to a ${payment.status.replaceAll('_', ' ')} payment.</p>`;
  if (!canOperate) return compact ? null : html`<p class="muted" data-testid="no-permission">Your role cannot act on payments (the operator and admin roles can).</p>`;
  const run = async (action, { force }) => {
    const path = `/admin/payments/${encodeURIComponent(payment.id)}`;
    const result = action === 'cancel' ? await post(`${path}/cancel`) : await post(`${path}/resolve`, { resolution: action, ...(force ? { force: true } : {}) });
    onDone?.(result);
  };
  const spec = open ? ACTIONS[open] : null;
  return html`<div class=${compact ? 'actions compact' : 'actions'}>
    ${available.map(
      (action) => html`<button type="button" class=${`button ${ACTIONS[action].tone === 'danger' ? 'danger-outline' : ''}`} data-action=${action} onClick=${() => setOpen(action)}>
        ${ACTIONS[action].button}
      </button>`,
    )}
    ${spec
      ? html`<${ConfirmDialog}
          title=${spec.title}
          description=${html`<p><code>${payment.id}</code> · ${usd(payment.amount_usd)} on ${chainLabel(payment.selected_chain)}</p><p>${spec.text}</p>`}
          confirmLabel=${spec.confirm}
          tone=${spec.tone}
          allowForce=${open === 'settled' || open === 'failed'}
          onConfirm=${(options) => run(open, options)}
          onClose=${() => setOpen(null)}
        />`
      : null}
  </div>`;
}
