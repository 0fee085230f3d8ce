// The tracing facade (src/tracing): the no-op tracer without configuration, the SDK's spans with it (parents, links,
// traceparents, attributes that could only hold a secret dropped), the JSON-RPC method names of a request, and that no
// module but src/tracing/otel.ts imports OpenTelemetry (it is loaded by a dynamic import, only when configured).
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace';
import { afterEach, describe, expect, it } from 'vitest';
import { rpcMethodsOf } from '../../src/chains/rpc-span.js';
import type { TraceSettings } from '../../src/config.js';
import { loadConfig } from '../../src/config.js';
import { installTracer, noTracer, parseTraceparent, tracer, type Tracer } from '../../src/tracing/tracer.js';

const SETTINGS: TraceSettings = { serviceName: 'stableroute-test', sampler: { name: 'parentbased_always_on', ratio: 1 }, exportDelayMs: 10 };

describe('without configuration', () => {
  it('is off, and the tracer is the no-op one', async () => {
    expect(loadConfig({}).traces).toBeNull();
    expect(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318', OTEL_SDK_DISABLED: 'true' }).traces).toBeNull();
    expect(tracer()).toBe(noTracer);
    expect(await tracer().inSpan('x', {}, async (span) => span.traceparent())).toBeNull();
    expect(tracer().current()).toBeNull();
  });

  it('reads the standard variables, and refuses a sampler it does not know', () => {
    expect(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318', OTEL_SERVICE_NAME: 'payouts', OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.25' }).traces).toEqual({
      serviceName: 'payouts',
      sampler: { name: 'parentbased_traceidratio', ratio: 0.25 },
      exportDelayMs: 2000,
    });
    expect(() => loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318', OTEL_TRACES_SAMPLER: 'sometimes' })).toThrow(/OTEL_TRACES_SAMPLER/);
    expect(() => loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'localhost:4318' })).toThrow(/OTEL_EXPORTER_OTLP_ENDPOINT/);
    expect(() => loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4317', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' })).toThrow(/OTEL_EXPORTER_OTLP_PROTOCOL/);
    expect(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318', OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' }).traces).not.toBeNull();
  });

  it('no module but src/tracing/otel.ts imports OpenTelemetry, and start.ts loads it only by a dynamic import', () => {
    const root = path.resolve(import.meta.dirname, '../../src');
    const files = (readdirSync(root, { recursive: true }) as string[]).filter((f) => f.endsWith('.ts'));
    const importers = files.filter((f) => /from\s+['"]@opentelemetry\//.test(readFileSync(path.join(root, f), 'utf8')));
    expect(importers).toEqual([path.join('tracing', 'otel.ts')]);
    const staticOtel = files.filter((f) => /^\s*import\s[^(]*from\s+['"][./]*(tracing\/)?otel\.js['"]/m.test(readFileSync(path.join(root, f), 'utf8')));
    expect(staticOtel).toEqual([]);
    expect(readFileSync(path.join(root, 'tracing/start.ts'), 'utf8')).toMatch(/await import\('\.\/otel\.js'\)/);
  });
});

describe('JSON-RPC method names', () => {
  it('are read from a request or a batch, never anything else of it', () => {
    expect(rpcMethodsOf('{"jsonrpc":"2.0","id":1,"method":"eth_sendRawTransaction","params":["0xdeadbeef"]}')).toEqual(['eth_sendRawTransaction']);
    expect(rpcMethodsOf([{ method: 'getBalance' }, { method: 'getSlot' }])).toEqual(['getBalance', 'getSlot']);
    expect(rpcMethodsOf('not json')).toEqual([]);
  });
});

describe('with the SDK', () => {
  let uninstall: (() => void) | undefined;
  let installed: Tracer | undefined;
  afterEach(async () => {
    uninstall?.();
    await installed?.shutdown();
  });

  async function sdk() {
    const { createOtelTracer } = await import('../../src/tracing/otel.js');
    // Kept past shutdown (the SDK's in-memory exporter forgets its spans when shut down).
    const finished: ReadableSpan[] = [];
    const exporter: SpanExporter & { getFinishedSpans(): ReadableSpan[] } = {
      export: (spans, done) => {
        finished.push(...spans);
        done({ code: 0 });
      },
      shutdown: async () => undefined,
      getFinishedSpans: () => finished,
    };
    installed = createOtelTracer(SETTINGS, { exporter });
    uninstall = installTracer(installed);
    return { t: installed, exporter };
  }

  it('nests spans, continues a stored traceparent, links a batch to its items and drops secret-named attributes', async () => {
    const { t, exporter } = await sdk();
    const request = await t.inSpan('POST /payment_intents', { kind: 'server', parent: null }, async () => {
      await t.inSpan('db.transaction', { kind: 'client' }, async () => undefined);
      return t.current()!;
    });
    const requestIds = parseTraceparent(request)!;
    await t.inSpan('execution batch', { parent: null, attributes: { 'batch.size': 1, api_key: 'sk_live_x', 'webhook.secret': 'whsec_y' } }, async (batch) => {
      batch.addLinks([request, null, 'garbage']);
      const item = t.startSpan('payment.execute', { parent: request, links: [batch.traceparent()] });
      item.end();
    });
    await installed!.shutdown();
    const spans = exporter.getFinishedSpans();
    const byName = new Map(spans.map((s) => [s.name, s]));
    expect(byName.get('db.transaction')!.parentSpanContext?.spanId).toBe(requestIds.spanId);
    expect(byName.get('db.transaction')!.spanContext().traceId).toBe(requestIds.traceId);
    const item = byName.get('payment.execute')!;
    expect(item.spanContext().traceId).toBe(requestIds.traceId);
    expect(item.parentSpanContext?.spanId).toBe(requestIds.spanId);
    const batch = byName.get('execution batch')!;
    expect(batch.spanContext().traceId).not.toBe(requestIds.traceId);
    expect(batch.links.map((l) => l.context.spanId)).toEqual([requestIds.spanId]);
    expect(item.links.map((l) => l.context.spanId)).toEqual([batch.spanContext().spanId]);
    expect(batch.attributes).toEqual({ 'batch.size': 1 });
  });

  it('marks a failed span with the error name and code, never its message', async () => {
    const { t, exporter } = await sdk();
    const error = Object.assign(new Error('refused: key 0xabc is wrong'), { code: '40001' });
    await expect(t.inSpan('db.transaction', {}, async () => Promise.reject(error))).rejects.toBe(error);
    await installed!.shutdown();
    const [span] = exporter.getFinishedSpans();
    expect(span!.status.code).toBe(2);
    expect(span!.attributes['error.type']).toBe('Error 40001');
    expect(JSON.stringify(span!.attributes)).not.toContain('0xabc');
  });
});
