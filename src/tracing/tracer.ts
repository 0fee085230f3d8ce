// Our own small face of tracing: what the service's code calls, with no OpenTelemetry import. Until the runtime installs
// the SDK's implementation (src/tracing/start.ts, only when OTEL_EXPORTER_OTLP_ENDPOINT is set), every call is a no-op
// that costs a function call. A span's context crosses processes and jobs as a W3C `traceparent` string (decision 212).

/** Attribute values: never a secret, an API key, a signature, a private key or a payload (decision 213). */
export type SpanAttributes = Record<string, string | number | boolean | undefined>;

export type SpanKind = 'internal' | 'server' | 'client';

export interface SpanOptions {
  kind?: SpanKind;
  attributes?: SpanAttributes;
  /**
   * The parent: undefined, the span active where it starts; a traceparent, that span (another process's, a stored
   * one); null, none: the span starts a trace of its own (a batch, whose items' traces it links to).
   */
  parent?: string | null;
  /** Traceparents of the spans this one is about without being their child (a batch's items); nulls are skipped. */
  links?: readonly (string | null | undefined)[];
}

export interface Span {
  setAttributes(attributes: SpanAttributes): void;
  addLinks(traceparents: readonly (string | null | undefined)[]): void;
  /** Marks the span failed with the error's name and code (not its message, which may quote a payload). */
  fail(error: unknown): void;
  /** This span as a W3C traceparent, or null when it is not recorded. */
  traceparent(): string | null;
  end(): void;
}

export interface Tracer {
  /** False for the no-op tracer: callers skip the work that only feeds spans (a query of traceparents). */
  readonly enabled: boolean;
  /** Runs fn inside a new span, ended when fn settles; a rejection marks it failed. */
  inSpan<T>(name: string, options: SpanOptions, fn: (span: Span) => Promise<T>): Promise<T>;
  /** A span that the caller ends; it is not made active (runIn does that). */
  startSpan(name: string, options?: SpanOptions): Span;
  /** Runs fn with `span` active: spans started inside become its children. */
  runIn<T>(span: Span, fn: () => T): T;
  /** The active span's traceparent, or null. */
  current(): string | null;
  /** Exports what is pending and stops. */
  shutdown(): Promise<void>;
}

const NO_SPAN: Span = {
  setAttributes: () => undefined,
  addLinks: () => undefined,
  fail: () => undefined,
  traceparent: () => null,
  end: () => undefined,
};

export const noTracer: Tracer = {
  enabled: false,
  inSpan: (_name, _options, fn) => fn(NO_SPAN),
  startSpan: () => NO_SPAN,
  runIn: (_span, fn) => fn(),
  current: () => null,
  shutdown: async () => undefined,
};

// Process-wide, as OpenTelemetry's own API is (its context manager and provider are globals): the spans of the
// database layer and the chain transports are started where no context is handed down (decision 212).
let installed: Tracer = noTracer;

/** The tracer of this process: the no-op one unless the runtime installed the SDK's. */
export function tracer(): Tracer {
  return installed;
}

/** Installs `t` for the process; the returned function puts the no-op tracer back (if `t` is still the one). */
export function installTracer(t: Tracer): () => void {
  installed = t;
  return () => {
    if (installed === t) installed = noTracer;
  };
}

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/** A traceparent's parts, or null when the text is not one (an all-zero id is invalid, as W3C says). */
export function parseTraceparent(text: string | null | undefined): { traceId: string; spanId: string; flags: number } | null {
  const match = text ? TRACEPARENT.exec(text.trim()) : null;
  if (!match || /^0+$/.test(match[1]!) || /^0+$/.test(match[2]!)) return null;
  return { traceId: match[1]!, spanId: match[2]!, flags: Number.parseInt(match[3]!, 16) };
}

export function formatTraceparent(traceId: string, spanId: string, flags: number): string {
  return `00-${traceId}-${spanId}-${(flags & 0xff).toString(16).padStart(2, '0')}`;
}
