// The console's live view of payments: every intent's creation and change as the database announces it (INTENT_CHANNEL,
// written with each change by db/queries/transitions.ts), heard on one LISTEN connection (db/listener.ts). A notice
// is a hint: after each (re)connection the listener says so, and what the console shows must be read again.
import { listen, type Listener } from '../../../db/listener.js';
import { INTENT_CHANNEL } from '../../../db/queries/transitions.js';
import type { AppContext } from '../../context.js';

export interface PaymentChangeHandlers {
  /** One change, as IntentNotice JSON text (ids and statuses only). */
  onChange(notice: string): void;
  /** Listening, the first time or again after the connection came back. */
  onListening(): void;
}

/** Listens for every payment's changes until the returned listener is closed. */
export function listenToPaymentChanges(ctx: Pick<AppContext, 'pool' | 'log'>, handlers: PaymentChangeHandlers): Listener {
  return listen(ctx.pool, { channel: INTENT_CHANNEL, onNotice: handlers.onChange, onListening: handlers.onListening, log: ctx.log });
}
