// How logs look (decision 210): JSON lines for machines (production, LOG_FORMAT=json, or output that is not a
// terminal), one readable line per record for a person running `npm start` in a terminal in development.
import { createRequire } from 'node:module';
import type { DestinationStream } from 'pino';
import type prettyFactory from 'pino-pretty';

export const LOG_FORMATS = ['json', 'pretty'] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

/** LOG_FORMAT when set; otherwise pretty only in development with a terminal on stdout. */
export function logFormatOf(setting: LogFormat | null, production: boolean, terminal: boolean): LogFormat {
  if (setting !== null) return setting;
  return !production && terminal ? 'pretty' : 'json';
}

type Fields = Record<string, unknown>;

/** `[component] message (payment pi_…)`: who speaks and about which payment, before what is said. */
export function prettyMessage(log: Fields, messageKey: string): string {
  const component = typeof log.component === 'string' ? `[${log.component}] ` : '';
  const payment = typeof log.payment_intent_id === 'string' ? ` (payment ${log.payment_intent_id})` : '';
  return `${component}${String(log[messageKey] ?? '')}${payment}`;
}

/** The stream a pretty logger writes to: time, level, then prettyMessage; the record's other fields below it. */
export function prettyStream(destination: NodeJS.WritableStream | number = 1, colorize = true): DestinationStream {
  // Loaded here, not at the top: a service logging JSON never loads the pretty-printer.
  const pretty = createRequire(import.meta.url)('pino-pretty') as typeof prettyFactory;
  return pretty({
    destination,
    sync: true, // a line written before a crash or exit is a line seen
    colorize,
    translateTime: 'SYS:HH:MM:ss.l',
    ignore: 'pid,hostname,component,payment_intent_id',
    messageFormat: (log, messageKey) => prettyMessage(log, messageKey),
  });
}
