// Tracing at start-up: with traces configured, the OpenTelemetry SDK is imported (only then) and installed as the
// process's tracer; without, nothing is loaded and the no-op tracer stays.
import type { Logger } from 'pino';
import type { TraceSettings } from '../config.js';
import { installTracer, type Tracer } from './tracer.js';

export interface StartedTracing {
  tracer: Tracer;
  /** Exports the spans still pending and uninstalls the tracer. */
  stop(): Promise<void>;
}

export async function startTracing(settings: TraceSettings | null, log: Logger): Promise<StartedTracing | null> {
  if (settings === null) return null;
  const { createOtelTracer } = await import('./otel.js');
  const tracer = createOtelTracer(settings);
  const uninstall = installTracer(tracer);
  log.info({ service_name: settings.serviceName, sampler: settings.sampler.name }, 'tracing: spans exported over OTLP/HTTP');
  return {
    tracer,
    stop: async () => {
      uninstall();
      await tracer.shutdown().catch((error: unknown) => log.warn({ err: error }, 'tracing: the last spans could not be exported'));
    },
  };
}
