// The webhook worker loop: a batch every WEBHOOK_POLL_SECONDS (the shared periodic loop), sooner when the outbox
// NOTIFYs (wake()), and back to back while batches come back full. The LISTEN connection is an accelerator only:
// while it is down, polling still delivers everything, just later.
import { WEBHOOK_BATCH_EVENTS_MAX, WEBHOOK_LANES, WEBHOOK_PASSES_PER_WAKE_MAX, WEBHOOK_STOP_MARGIN_MS } from '../bounds.js';
import { deliverDueEvents, totalHandled, type WebhookDeps } from '../core/webhooks/delivery.js';
import { listen } from '../db/listener.js';
import { WEBHOOK_CHANNEL } from '../db/queries/outbox.js';
import { every, RUN_AGAIN } from './periodic.js';

export interface WebhookWorkerOptions {
  batchSize?: number;
  concurrency?: number;
  /** Full batches run back to back at most this many times before the loop yields to a timer. */
  maxBatchesPerWake?: number;
  listenReconnectMinMs?: number;
  listenReconnectMaxMs?: number;
  /** How long stop() waits for the in-flight batch; default: the POST timeout plus 5 s. */
  stopTimeoutMs?: number;
  /** Called each time the loop has nothing left to do and waits for the next poll or notification. */
  onIdle?: (state: { listening: boolean }) => void;
}

export interface WebhookWorker {
  stop(): Promise<void>;
}

export const LISTENER_APPLICATION_NAME = 'stableroute-webhooks-listener';

export function startWebhookWorker(deps: WebhookDeps, options: WebhookWorkerOptions = {}): WebhookWorker {
  const batchSize = options.batchSize ?? WEBHOOK_BATCH_EVENTS_MAX;
  const concurrency = options.concurrency ?? WEBHOOK_LANES;
  const maxBatchesPerWake = options.maxBatchesPerWake ?? WEBHOOK_PASSES_PER_WAKE_MAX;
  const log = deps.log;
  let stopping: Promise<void> | null = null;

  // --- batches: the shared periodic loop; a full last batch asks for another pass right away --------------------

  const loop = every(
    'webhooks',
    deps.config.webhookPollSeconds,
    async () => {
      for (let i = 0; i < maxBatchesPerWake && loop.running; i++) {
        const counts = await deliverDueEvents(deps, { batchSize, concurrency, shouldContinue: () => loop.running });
        if (totalHandled(counts) < batchSize) return undefined;
      }
      return RUN_AGAIN;
    },
    log,
    {
      onIdle: () => options.onIdle?.({ listening: listener.listening }),
      stopTimeoutMs: options.stopTimeoutMs ?? deps.config.webhookTimeoutSeconds * 1000 + WEBHOOK_STOP_MARGIN_MS,
    },
  );

  // --- LISTEN (src/db/listener.ts): a notification wakes the loop; after each (re)connection it catches up --------

  const listener = listen(deps.pool, {
    channel: WEBHOOK_CHANNEL,
    applicationName: LISTENER_APPLICATION_NAME,
    onNotice: () => loop.wake(),
    onListening: () => loop.wake(), // anything notified while we were not listening
    log,
    ...(options.listenReconnectMinMs !== undefined ? { reconnectMinMs: options.listenReconnectMinMs } : {}),
    ...(options.listenReconnectMaxMs !== undefined ? { reconnectMaxMs: options.listenReconnectMaxMs } : {}),
  });

  return {
    stop(): Promise<void> {
      stopping ??= (async () => {
        await loop.stop();
        await listener.close();
      })();
      return stopping;
    },
  };
}
