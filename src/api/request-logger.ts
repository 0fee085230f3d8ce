// A request's logger, built the first time something is logged through it. Fastify gives every request a child of
// the service's logger, bound to the request's id; pino builds a child by serialising its bindings, through the
// redaction paths when any path starts with a wildcard, as ours do. On a cheap request that was a measurable share of
// the CPU (decision 153), and most requests log nothing at the service's level. What is logged is unchanged: the
// same child, with the same bindings and redaction, is built on the first call at an enabled level.
import type { FastifyBaseLogger } from 'fastify';
import type { Bindings, ChildLoggerOptions, Level, LogFn, Logger } from 'pino';

/** Fastify's `childLoggerFactory`: a stand-in that builds `parent.child(bindings, options)` when first needed. */
export function lazyRequestLogger(parent: FastifyBaseLogger, bindings: Bindings, options: ChildLoggerOptions): FastifyBaseLogger {
  let child: FastifyBaseLogger | undefined;
  const real = (): FastifyBaseLogger => (child ??= parent.child(bindings, options));
  // A parent without isLevelEnabled (not pino) gets its child at the first call, whatever the level.
  const isLevelEnabled = (parent as Partial<Logger>).isLevelEnabled?.bind(parent) ?? (() => true);
  const enabled = (level: Level): boolean => child !== undefined || isLevelEnabled(level);
  const logAt = (level: Level): LogFn =>
    ((...args: Parameters<LogFn>) => {
      if (enabled(level)) real()[level](...args);
    }) as LogFn;
  const lazy: FastifyBaseLogger = {
    get level() {
      return (child ?? parent).level;
    },
    set level(level) {
      real().level = level;
    },
    fatal: logAt('fatal'),
    error: logAt('error'),
    warn: logAt('warn'),
    info: logAt('info'),
    debug: logAt('debug'),
    trace: logAt('trace'),
    silent: () => undefined,
    child: (more, moreOptions) => real().child(more, moreOptions),
  };
  return lazy;
}
