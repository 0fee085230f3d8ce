// The Tracer of tracer.ts on the OpenTelemetry SDK: spans batched and exported over OTLP/HTTP (JSON). Loaded only by a
// dynamic import in start.ts, when tracing is configured: a process without it never loads OpenTelemetry.
import { context, ROOT_CONTEXT, SpanKind as OtelKind, SpanStatusCode, trace, TraceFlags, type Context, type Link, type Span as OtelSpan } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BatchSpanProcessor,
  ParentBasedSampler,
  TraceIdRatioBasedSampler,
  TracerProvider,
  type Sampler,
  type SpanExporter,
} from '@opentelemetry/sdk-trace';
import { ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION } from '@opentelemetry/semantic-conventions';
import type { TraceSettings } from '../config.js';
import { TRACE_EXPORT_DELAY_MS, TRACE_EXPORT_TIMEOUT_MS, TRACE_QUEUE_SPANS_MAX } from '../bounds.js';
import { formatTraceparent, parseTraceparent, type Span, type SpanAttributes, type SpanKind, type SpanOptions, type Tracer } from './tracer.js';

/**
 * Attribute names that could only hold a secret: dropped whatever a caller passes (decision 213). Our spans name
 * their attributes themselves and never carry one; this is the belt to those braces.
 */
const SECRET_NAME = /secret|password|passphrase|private|api[_.-]?key|token|authorization|signature|cookie|pin$|seed|mnemonic/i;

function safe(attributes: SpanAttributes | undefined): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {};
  for (const [name, value] of Object.entries(attributes ?? {})) if (value !== undefined && !SECRET_NAME.test(name)) out[name] = value;
  return out;
}

const KINDS: Record<SpanKind, OtelKind> = { internal: OtelKind.INTERNAL, server: OtelKind.SERVER, client: OtelKind.CLIENT };

function remote(traceparent: string | null | undefined): { traceId: string; spanId: string; traceFlags: number; isRemote: true } | null {
  const parsed = parseTraceparent(traceparent);
  return parsed && { traceId: parsed.traceId, spanId: parsed.spanId, traceFlags: parsed.flags & TraceFlags.SAMPLED, isRemote: true };
}

function linksOf(traceparents: readonly (string | null | undefined)[] | undefined): Link[] {
  return (traceparents ?? []).flatMap((tp) => {
    const spanContext = remote(tp);
    return spanContext ? [{ context: spanContext }] : [];
  });
}

class OtelSpanHandle implements Span {
  constructor(readonly span: OtelSpan) {}
  setAttributes(attributes: SpanAttributes): void {
    this.span.setAttributes(safe(attributes));
  }
  addLinks(traceparents: readonly (string | null | undefined)[]): void {
    const links = linksOf(traceparents);
    if (links.length > 0) this.span.addLinks(links);
  }
  fail(error: unknown): void {
    const e = error as { name?: unknown; code?: unknown; reason?: unknown } | null;
    const type = [e?.name, e?.code ?? e?.reason].filter((v) => typeof v === 'string' && v.length <= 64).join(' ');
    this.span.setAttribute('error.type', type || 'error');
    this.span.setStatus({ code: SpanStatusCode.ERROR });
  }
  traceparent(): string | null {
    const c = this.span.spanContext();
    return trace.isSpanContextValid(c) ? formatTraceparent(c.traceId, c.spanId, c.traceFlags) : null;
  }
  end(): void {
    this.span.end();
  }
}

/** OTEL_TRACES_SAMPLER and its argument, as the OpenTelemetry specification names them. */
export function samplerOf(settings: TraceSettings['sampler']): Sampler {
  const ratio = new TraceIdRatioBasedSampler(settings.ratio);
  switch (settings.name) {
    case 'always_on':
      return new AlwaysOnSampler();
    case 'always_off':
      return new AlwaysOffSampler();
    case 'traceidratio':
      return ratio;
    case 'parentbased_always_on':
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
    case 'parentbased_always_off':
      return new ParentBasedSampler({ root: new AlwaysOffSampler() });
    case 'parentbased_traceidratio':
      return new ParentBasedSampler({ root: ratio });
  }
}

/**
 * A Tracer exporting to OTEL_EXPORTER_OTLP_ENDPOINT (the exporter reads it, OTEL_EXPORTER_OTLP_HEADERS and the
 * traces-specific variants itself); `exporter` stands in for it in tests.
 */
export function createOtelTracer(settings: TraceSettings, options: { exporter?: SpanExporter; version?: string } = {}): Tracer {
  const contextManager = new AsyncLocalStorageContextManager().enable();
  context.setGlobalContextManager(contextManager);
  const processor = new BatchSpanProcessor({
    exporter: options.exporter ?? new OTLPTraceExporter({ timeoutMillis: TRACE_EXPORT_TIMEOUT_MS }),
    scheduledDelayMillis: settings.exportDelayMs ?? TRACE_EXPORT_DELAY_MS,
    maxQueueSize: TRACE_QUEUE_SPANS_MAX,
    exportTimeoutMillis: TRACE_EXPORT_TIMEOUT_MS,
  });
  const provider = new TracerProvider({
    resource: resourceFromAttributes({ [ATTR_SERVICE_NAME]: settings.serviceName, ...(options.version ? { [ATTR_SERVICE_VERSION]: options.version } : {}) }),
    sampler: samplerOf(settings.sampler),
    spanProcessors: [processor],
  });
  const otel = provider.getTracer('stableroute');

  const parentContext = (parent: string | null | undefined): Context => {
    if (parent === undefined) return context.active();
    const spanContext = remote(parent);
    return spanContext ? trace.setSpanContext(ROOT_CONTEXT, spanContext) : ROOT_CONTEXT;
  };
  const start = (name: string, options: SpanOptions): { handle: OtelSpanHandle; parent: Context } => {
    const parent = parentContext(options.parent);
    const span = otel.startSpan(name, { kind: KINDS[options.kind ?? 'internal'], attributes: safe(options.attributes), links: linksOf(options.links) }, parent);
    return { handle: new OtelSpanHandle(span), parent };
  };

  return {
    enabled: true,
    async inSpan(name, options, fn) {
      const { handle, parent } = start(name, options);
      return context.with(trace.setSpan(parent, handle.span), async () => {
        try {
          return await fn(handle);
        } catch (error) {
          handle.fail(error);
          throw error;
        } finally {
          handle.end();
        }
      });
    },
    startSpan: (name, options = {}) => start(name, options).handle,
    runIn: (span, fn) => (span instanceof OtelSpanHandle ? context.with(trace.setSpan(context.active(), span.span), fn) : fn()),
    current() {
      const span = trace.getSpan(context.active());
      return span ? new OtelSpanHandle(span).traceparent() : null;
    },
    async shutdown() {
      await provider.shutdown();
      contextManager.disable();
      context.disable();
    },
  };
}
