// A request's logger, built the first time something is logged through it. Fastify gives every request a child of
// the service's logger, bound to the request's id; pino builds a child by serialising its bindings, through the
// redaction paths when any path starts with a wildcard, as ours do. On a cheap request that was a measurable share of
// the CPU (decision 142), and most requests log nothing at the service's level. What is logged is unchanged: the
// same child, with the same bindings and redaction, is built on the first call at an enabled level. One small object
// per request (methods on the prototype, no closures): requests are many, and what each allocates shows in the RSS.
import type { FastifyBaseLogger } from 'fastify';
import type { Bindings, ChildLoggerOptions, Level, Logger } from 'pino';

type LogCall = (...args: unknown[]) => void;

class LazyRequestLogger implements FastifyBaseLogger {
  #child: FastifyBaseLogger | undefined;

  constructor(
    private readonly parent: FastifyBaseLogger,
    private readonly bindings: Bindings,
    private readonly options: ChildLoggerOptions,
  ) {}

  get level(): string {
    return (this.#child ?? this.parent).level;
  }

  set level(level: string) {
    this.real().level = level;
  }

  fatal(...args: unknown[]): void {
    this.write('fatal', args);
  }

  error(...args: unknown[]): void {
    this.write('error', args);
  }

  warn(...args: unknown[]): void {
    this.write('warn', args);
  }

  info(...args: unknown[]): void {
    this.write('info', args);
  }

  debug(...args: unknown[]): void {
    this.write('debug', args);
  }

  trace(...args: unknown[]): void {
    this.write('trace', args);
  }

  silent(): void {}

  child(bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    return this.real().child(bindings, options);
  }

  private real(): FastifyBaseLogger {
    return (this.#child ??= this.parent.child(this.bindings, this.options));
  }

  private write(level: Level, args: unknown[]): void {
    // A parent without isLevelEnabled (not pino) gets its child at the first call, whatever the level.
    const isLevelEnabled = (this.parent as Partial<Logger>).isLevelEnabled;
    if (this.#child === undefined && isLevelEnabled !== undefined && !isLevelEnabled.call(this.parent, level)) return;
    const child = this.real();
    (child[level] as LogCall).apply(child, args);
  }
}

/** Fastify's `childLoggerFactory`: a stand-in that builds `parent.child(bindings, options)` when first needed. */
export function lazyRequestLogger(parent: FastifyBaseLogger, bindings: Bindings, options: ChildLoggerOptions): FastifyBaseLogger {
  return new LazyRequestLogger(parent, bindings, options);
}
