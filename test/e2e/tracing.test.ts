// `stableroute serve` with OTEL_EXPORTER_OTLP_ENDPOINT pointing at a collector in this test: one payment settles on
// the simulated chains, and its spans, as exported over OTLP/HTTP, form one trace from POST /payment_intents through
// its reservation, execution, confirmation and webhooks; the batches that carried it are traces of their own that link
// to it; its reservation links to its quote's trace; and no attribute holds a secret, a key or a transaction id.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort, runCommand, waitFor, waitHealthy } from '../helpers/process.js';
import { serviceFixture } from '../helpers/service-fixture.js';

const WEBHOOK_SECRET = 'e2e-tracing-webhook-secret-0123456789';
const API_KEY_SALT = 'e2e-tracing-api-key-salt-0123456789';
const COLLECTOR_TOKEN = 'collector-token-abcdef0123456789';
const SOL = '9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM';
const fx = serviceFixture(WEBHOOK_SECRET);

interface CollectedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  kind: number;
  attributes: Record<string, unknown>;
  links: { traceId: string; spanId: string }[];
  service: unknown;
}

type OtlpAttribute = { key: string; value: Record<string, unknown> };
const attributesOf = (list: OtlpAttribute[] | undefined): Record<string, unknown> =>
  Object.fromEntries((list ?? []).map((a) => [a.key, Object.values(a.value)[0]]));

/** An OTLP/HTTP collector: every span of every POST /v1/traces (JSON, as the exporter sends), and the requests' headers. */
async function collector() {
  const spans: CollectedSpan[] = [];
  const headers: Record<string, string | string[] | undefined>[] = [];
  const bodies: string[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      headers.push(req.headers);
      let raw = Buffer.concat(chunks);
      if (req.headers['content-encoding'] === 'gzip') raw = gunzipSync(raw);
      const text = raw.toString('utf8');
      bodies.push(text);
      const body = JSON.parse(text) as {
        resourceSpans: { resource: { attributes: OtlpAttribute[] }; scopeSpans: { spans: (Omit<CollectedSpan, 'attributes' | 'service'> & { attributes: OtlpAttribute[] })[] }[] }[];
      };
      for (const rs of body.resourceSpans) {
        const service = attributesOf(rs.resource.attributes)['service.name'];
        for (const ss of rs.scopeSpans) for (const s of ss.spans) spans.push({ ...s, links: s.links ?? [], parentSpanId: s.parentSpanId ?? '', attributes: attributesOf(s.attributes), service });
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    spans,
    headers,
    bodies,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

let otlp: Awaited<ReturnType<typeof collector>> | undefined;
afterAll(async () => otlp?.close());

describe('traces over OTLP/HTTP', () => {
  it('follow one payment from its request to its last webhook, and hold no secret', { timeout: 120_000 }, async () => {
    otlp = await collector();
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const env = { DATABASE_URL: fx.db.url, API_KEY_SALT, WEBHOOK_SIGNING_SECRET: WEBHOOK_SECRET };
    const service = fx.start(['serve'], {
      ...env,
      PORT: String(port),
      HOST: '127.0.0.1',
      DEV_MERCHANT_WEBHOOK_URL: fx.receiver.url,
      SIM_CONFIRM_SECONDS: '1',
      CONFIRMATION_POLL_SECONDS: '0.1',
      WEBHOOK_POLL_SECONDS: '0.1',
      OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url,
      OTEL_EXPORTER_OTLP_HEADERS: `x-collector-token=${COLLECTOR_TOKEN}`,
      OTEL_SERVICE_NAME: 'stableroute-e2e',
      OTEL_BSP_SCHEDULE_DELAY: '100',
    });
    await waitHealthy(base, service);
    // A key of the test merchant's own, to look for in what was exported.
    const created = await runCommand(['merchants', 'keys', 'create', 'mer_test', '--json'], env);
    expect(created.code, created.stderr).toBe(0);
    const apiKey = (JSON.parse(created.stdout.trim().split('\n').at(-1)!) as { api_key: string }).api_key;
    const post = async (path: string, body: unknown, headers: Record<string, string> = {}) =>
      fetch(`${base}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': apiKey, ...headers }, body: JSON.stringify(body) });

    // The quote continues the caller's trace (a W3C traceparent header), the payment starts one of its own.
    const caller = { traceId: '4bf92f3577b34da6a3ce929d0e0e4736', spanId: '00f067aa0ba902b7' };
    const quote = (await (
      await post('/quotes', { amount_usd: 12.5, destination: { solana_address: SOL }, priority: 'fast' }, { traceparent: `00-${caller.traceId}-${caller.spanId}-01` })
    ).json()) as { quote_id: string };
    const res = await post('/payment_intents', { quote_id: quote.quote_id, idempotency_key: 'trace-1' });
    expect(res.status).toBe(201);
    const paymentId = ((await res.json()) as { payment_intent_id: string }).payment_intent_id;

    await waitFor(
      'the payment settled and payment.settled delivered',
      async () => fx.receiver.events.some((e) => e.payment_intent_id === paymentId && e.event_type === 'payment.settled'),
      60_000,
    );
    const spans = otlp.spans;
    const named = (name: string) => spans.filter((s) => s.name === name);
    const request = await waitFor('the POST /payment_intents span', async () => named('POST /payment_intents')[0], 20_000);
    const trace = request.traceId;
    const inTrace = () => spans.filter((s) => s.traceId === trace);
    const deliveredSettled = () =>
      inTrace().find((s) => s.name === 'webhook.deliver' && s.attributes['webhook.event_type'] === 'payment.settled' && s.attributes['webhook.status'] === 'delivered');
    await waitFor('the payment.settled delivery span', async () => deliveredSettled(), 20_000);

    // 1. The request: a server span with its route and status, a root, from the configured service.
    expect(request).toMatchObject({ kind: 2, parentSpanId: '', service: 'stableroute-e2e' });
    expect(request.attributes).toMatchObject({ 'http.request.method': 'POST', 'http.route': '/payment_intents', 'http.response.status_code': 201 });

    // 2. Its reservation, in its trace, linked to the quote's trace and to the reservation batch.
    const reserve = inTrace().find((s) => s.name === 'payment.reserve')!;
    expect(reserve).toMatchObject({ parentSpanId: request.spanId, attributes: expect.objectContaining({ 'payment_intent.id': paymentId, 'quote.id': quote.quote_id }) });
    const quoteRequest = named('POST /quotes')[0]!;
    expect(quoteRequest).toMatchObject({ traceId: caller.traceId, parentSpanId: caller.spanId });
    expect(quoteRequest.traceId).not.toBe(trace);
    expect(reserve.links).toContainEqual(expect.objectContaining({ traceId: quoteRequest.traceId, spanId: quoteRequest.spanId }));
    const reservation = spans.find((s) => s.name === 'reservation batch' && s.links.some((l) => l.spanId === request.spanId))!;
    expect(reservation, 'a reservation batch span linking to the request').toBeDefined();
    expect(spans.some((s) => s.name === 'db.transaction' && s.parentSpanId === reservation.spanId && s.traceId === reservation.traceId)).toBe(true);

    // 3. Its execution: a span in its trace, linked to the execution batch, which links back to the payment.
    const execute = inTrace().find((s) => s.name === 'payment.execute' && s.attributes['execution.outcome'] === 'broadcasted')!;
    expect(execute).toMatchObject({ parentSpanId: request.spanId, attributes: expect.objectContaining({ 'payment_intent.id': paymentId, 'stableroute.chain': 'solana' }) });
    const batch = spans.find((s) => s.name === 'execution batch' && s.spanId === execute.links[0]?.spanId)!;
    expect(batch, 'the execution batch the payment span links to').toBeDefined();
    expect(batch.traceId).not.toBe(trace);
    expect(batch.links).toContainEqual(expect.objectContaining({ traceId: trace, spanId: request.spanId }));
    expect(spans.filter((s) => s.traceId === batch.traceId && s.name === 'db.transaction').length).toBeGreaterThan(0);

    // 4. Its confirmation: settled by a round that links to it.
    const confirm = inTrace().find((s) => s.name === 'payment.confirm' && s.attributes['confirmation.action'] === 'settle')!;
    expect(confirm, 'a payment.confirm span that settled it').toBeDefined();
    const round = spans.find((s) => s.name === 'confirmation round' && s.spanId === confirm.links[0]?.spanId)!;
    expect(round.links).toContainEqual(expect.objectContaining({ traceId: trace, spanId: request.spanId }));

    // 5. Its webhooks, each in its trace.
    const delivered = inTrace().filter((s) => s.name === 'webhook.deliver' && s.attributes['webhook.status'] === 'delivered');
    expect(new Set(delivered.map((s) => s.attributes['webhook.event_type']))).toEqual(
      new Set(fx.receiver.events.filter((e) => e.payment_intent_id === paymentId).map((e) => e.event_type)),
    );
    expect(delivered.every((s) => s.kind === 3 && s.attributes['http.response.status_code'] === 204)).toBe(true);

    // 6. The collector got the configured header; no attribute names or holds a secret, a key or the transaction id.
    expect(otlp.headers.every((h) => h['x-collector-token'] === COLLECTOR_TOKEN)).toBe(true);
    const attempt = await fx.db.pool.query<{ tx_id: string }>('SELECT tx_id FROM payment_attempts WHERE payment_intent_id = $1', [paymentId]);
    const txId = attempt.rows[0]!.tx_id;
    expect(txId.length).toBeGreaterThan(20);
    const exported = otlp.bodies.join('\n');
    for (const secret of [WEBHOOK_SECRET, API_KEY_SALT, apiKey, COLLECTOR_TOKEN, txId]) expect(exported, 'a secret in the exported spans').not.toContain(secret);
    const names = new Set(spans.flatMap((s) => Object.keys(s.attributes)));
    expect([...names].filter((n) => /secret|key|token|signature|authorization|password/i.test(n))).toEqual([]);
  });
});
