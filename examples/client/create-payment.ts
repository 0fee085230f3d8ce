// A merchant's client for stableroute, typed by what openapi-typescript generates from the service's own document:
//
//   npx openapi-typescript http://localhost:3000/openapi.json -o examples/client/stableroute-api.ts
//
// It asks for a quote and pays it out (POST /quotes, then POST /payment_intents) and prints the result as JSON:
//
//   STABLEROUTE_URL=http://localhost:3000 STABLEROUTE_API_KEY=dev node --import tsx examples/client/create-payment.ts
import { randomUUID } from 'node:crypto';
import { pathToFileURL } from 'node:url';
import type { components, paths } from './stableroute-api.js';

type Json<T> = T extends { content: { 'application/json': infer Body } } ? Body : never;

export type QuoteRequest = Json<paths['/quotes']['post']['requestBody']>;
export type Quote = Json<paths['/quotes']['post']['responses'][201]>;
export type PaymentIntentRequest = Json<paths['/payment_intents']['post']['requestBody']>;
export type PaymentIntent = Json<paths['/payment_intents']['post']['responses'][201]>;
export type ApiErrorBody = components['schemas']['Error'];

export interface StablerouteClient {
  baseUrl: string;
  apiKey: string;
  /** Every call gives up after this long. */
  timeoutMs?: number;
}

/** A refusal from the service. Branch on `code` (stable, documented), never on the message. */
export class StablerouteError extends Error {
  override readonly name = 'StablerouteError';
  constructor(
    readonly status: number,
    readonly body: ApiErrorBody,
  ) {
    super(`${status} ${body.code}: ${body.message}`);
  }
}

async function post<Body, Reply>(client: StablerouteClient, path: string, body: Body): Promise<Reply> {
  const response = await fetch(new URL(path, client.baseUrl), {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': client.apiKey },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(client.timeoutMs ?? 10_000),
  });
  const reply: unknown = await response.json();
  if (!response.ok) throw new StablerouteError(response.status, reply as ApiErrorBody);
  return reply as Reply;
}

export function createQuote(client: StablerouteClient, request: QuoteRequest): Promise<Quote> {
  return post<QuoteRequest, Quote>(client, '/quotes', request);
}

/** Creates the payout, or returns the one already created with this idempotency_key (same status, 201). */
export function createPaymentIntent(client: StablerouteClient, request: PaymentIntentRequest): Promise<PaymentIntent> {
  return post<PaymentIntentRequest, PaymentIntent>(client, '/payment_intents', request);
}

async function main(): Promise<void> {
  const client: StablerouteClient = {
    baseUrl: process.env.STABLEROUTE_URL ?? 'http://localhost:3000',
    apiKey: process.env.STABLEROUTE_API_KEY ?? 'dev',
  };
  const quote = await createQuote(client, {
    amount_usd: 25,
    destination: { solana_address: '9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM' },
    priority: 'fast',
  });
  if (quote.quote_id === undefined) throw new Error('the quote has no quote_id');
  // One key per payment you mean to make (an order id, say): retrying with it never pays twice.
  const idempotencyKey = process.env.STABLEROUTE_IDEMPOTENCY_KEY ?? `order-${randomUUID()}`;
  const intent = await createPaymentIntent(client, { quote_id: quote.quote_id, idempotency_key: idempotencyKey });
  process.stdout.write(
    `${JSON.stringify({
      quote_id: quote.quote_id,
      recommended_route: quote.recommended_route,
      payment_intent_id: intent.payment_intent_id,
      status: intent.status,
      selected_chain: intent.selected_chain,
      amount_usd: intent.amount_usd,
    })}\n`,
  );
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((error: unknown) => {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
  });
}
