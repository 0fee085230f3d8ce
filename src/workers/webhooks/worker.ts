// The webhook worker loop: a batch every WEBHOOK_POLL_SECONDS (the shared periodic loop), sooner when the outbox
// NOTIFYs (wake()), and back to back while batches come back full. The LISTEN connection is an accelerator only:
// while it is down, polling still delivers everything, just later.
import pg from 'pg';
import { DEFAULT_BATCH_SIZE, DEFAULT_CONCURRENCY, deliverDueEvents, totalHandled, type WebhookDeps } from '../../core/webhooks/delivery.js';
import { WEBHOOK_CHANNEL } from '../../db/queries/webhook-events.js';
import { every, RUN_AGAIN } from '../periodic.js';

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
const LISTENER_END_TIMEOUT_MS = 5_000;

/** Waits for `work` at most `ms`; true if it settled in time. The timer never outlives the wait. */
async function settlesWithin(work: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  try {
    return await Promise.race([work.then(() => true, () => true), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

export function startWebhookWorker(deps: WebhookDeps, options: WebhookWorkerOptions = {}): WebhookWorker {
  const batchSize = options.batchSize ?? DEFAULT_BATCH_SIZE;
  const concurrency = options.concurrency ?? DEFAULT_CONCURRENCY;
  const maxBatchesPerWake = options.maxBatchesPerWake ?? 50;
  const reconnectMinMs = options.listenReconnectMinMs ?? 500;
  const reconnectMaxMs = options.listenReconnectMaxMs ?? 30_000;
  const log = deps.log;

  let running = true;
  let stopping: Promise<void> | null = null;
  let listener: pg.Client | null = null;
  let connecting: Promise<void> | null = null;
  let reconnectTimer: NodeJS.Timeout | null = null;
  let reconnectFailures = 0;

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
      onIdle: () => options.onIdle?.({ listening: listener !== null }),
      stopTimeoutMs: options.stopTimeoutMs ?? deps.config.webhookTimeoutSeconds * 1000 + 5_000,
    },
  );

  // --- LISTEN --------------------------------------------------------------------------------------------------

  function scheduleReconnect(): void {
    if (!running || reconnectTimer !== null) return;
    const delayMs = Math.min(reconnectMaxMs, reconnectMinMs * 2 ** reconnectFailures);
    reconnectFailures++;
    reconnectTimer = setTimeout(() => {
      reconnectTimer = null;
      connecting = connectListener().finally(() => {
        connecting = null;
      });
    }, delayMs);
    reconnectTimer.unref();
  }

  async function connectListener(): Promise<void> {
    if (!running) return;
    const client = new pg.Client({ ...deps.pool.options, application_name: LISTENER_APPLICATION_NAME, keepAlive: true });
    let dropped = false;
    const onDrop = (error?: unknown): void => {
      if (dropped) return;
      dropped = true;
      if (listener === client) listener = null;
      if (error !== undefined) client.end().catch(() => undefined);
      if (!running) return;
      log?.warn({ err: error }, 'webhook LISTEN connection lost; polling continues, reconnecting');
      scheduleReconnect();
    };
    client.on('error', onDrop);
    client.on('end', () => onDrop());
    client.on('notification', (message) => {
      if (message.channel === WEBHOOK_CHANNEL) loop.wake();
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${WEBHOOK_CHANNEL}`);
    } catch (error) {
      onDrop(error ?? new Error('LISTEN failed'));
      return;
    }
    if (dropped) return;
    if (!running) {
      await client.end().catch(() => undefined);
      return;
    }
    listener = client;
    reconnectFailures = 0;
    loop.wake(); // anything notified while we were not listening
  }

  // --- start / stop --------------------------------------------------------------------------------------------

  connecting = connectListener().finally(() => {
    connecting = null;
  });

  async function shutDown(): Promise<void> {
    if (reconnectTimer !== null) clearTimeout(reconnectTimer);
    reconnectTimer = null;
    await loop.stop();
    if (connecting !== null) await settlesWithin(connecting, LISTENER_END_TIMEOUT_MS * 2);
    const client = listener;
    listener = null;
    if (client !== null) await settlesWithin(client.end(), LISTENER_END_TIMEOUT_MS);
  }

  return {
    stop(): Promise<void> {
      running = false;
      stopping ??= shutDown();
      return stopping;
    },
  };
}
