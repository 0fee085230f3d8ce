// A server span for each HTTP request while traces are on (decision 212): started when the request is routed, made
// active for its handler (spans the handler starts, such as its transactions, are its children), ended with the
// response. An incoming W3C `traceparent` header is its parent. Registered only when tracing is on: off, no hook runs.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { tracer, type Span } from '../tracing/tracer.js';

export function registerRequestTracing(app: FastifyInstance): void {
  const t = tracer();
  if (!t.enabled) return;
  const spans = new WeakMap<FastifyRequest, Span>();
  const end = (request: FastifyRequest, reply: FastifyReply) => {
    const span = spans.get(request);
    if (!span) return;
    spans.delete(request);
    span.setAttributes({ 'http.response.status_code': reply.statusCode });
    if (reply.statusCode >= 500) span.fail({ name: `HTTP ${reply.statusCode}` });
    span.end();
  };
  app.addHook('onRequest', (request, _reply, done) => {
    const header = request.headers.traceparent;
    const route = request.routeOptions.url ?? 'unmatched';
    // The route's pattern, never the URL: a query string is the client's text.
    const span = t.startSpan(`${request.method} ${route}`, {
      kind: 'server',
      parent: typeof header === 'string' ? header : null,
      attributes: { 'http.request.method': request.method, 'http.route': route, 'url.scheme': request.protocol },
    });
    spans.set(request, span);
    // The scopes' own onRequest hooks (authentication) run inside it.
    t.runIn(span, done);
  });
  // Again once the body is parsed (its stream's events run outside), for the route's own hooks and its handler.
  app.addHook('preValidation', (request, _reply, done) => {
    const span = spans.get(request);
    if (span) t.runIn(span, done);
    else done();
  });
  app.addHook('onResponse', (request, reply, done) => {
    end(request, reply);
    done();
  });
  app.addHook('onRequestAbort', (request, done) => {
    const span = spans.get(request);
    span?.setAttributes({ 'http.request.aborted': true });
    span?.end();
    spans.delete(request);
    done();
  });
}
