// `stableroute devnet` driven from the outside, as the CLI tests and the custody test use it: start it, read the
// environment it prints (test/helpers/devnet-process.ts), pay through the HTTP API it was pointed at, and ask the
// chains plain JSON-RPC.
import { expect } from 'vitest';

export { DEVNET_READY_MS, jsonLine, jsonRpc, RPC_TIMEOUT_MS, startDevnet, type Devnet } from './devnet-process.js';

export const KEY = { 'content-type': 'application/json', 'x-api-key': 'dev' };
export const SETTLE_MS = 60_000;
export const EXIT_MS = 15_000;

/** Waits for `promise`, failing with `what` after `ms` (a process that hangs on SIGTERM fails the test, not the run). */
export async function withDeadline<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`timed out: ${what}`)), ms)));
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

export type IntentView = { status: string; selected_chain: string; attempts: { tx_id: string; status: string }[] };

/** A quote, then a payment intent on it, through the service's HTTP API. */
export async function pay(base: string, amount_usd: number, destination: object, idempotency_key: string): Promise<string> {
  const quote = await fetch(`${base}/quotes`, { method: 'POST', headers: KEY, body: JSON.stringify({ amount_usd, destination, priority: 'fast' }) });
  const quoteBody = (await quote.json()) as { quote_id: string };
  expect(quote.status, JSON.stringify(quoteBody)).toBe(201);
  const intent = await fetch(`${base}/payment_intents`, { method: 'POST', headers: KEY, body: JSON.stringify({ quote_id: quoteBody.quote_id, idempotency_key }) });
  const intentBody = (await intent.json()) as { payment_intent_id: string };
  expect(intent.status, JSON.stringify(intentBody)).toBe(201);
  return intentBody.payment_intent_id;
}

export async function readIntent(base: string, id: string): Promise<IntentView> {
  const res = await fetch(`${base}/payment_intents/${id}`, { headers: KEY });
  expect(res.status).toBe(200);
  return (await res.json()) as IntentView;
}
