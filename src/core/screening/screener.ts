// Sanctions screening of recipients (issue 29): the local denylist first (a map lookup, no I/O), then, for the
// recipients it lets through, the outside provider when SCREENING_URL is set. Built once by the runtime and held by the
// context, so every process has its own list in memory, kept fresh by its own watch (list-file.ts).
import type { Logger } from 'pino';
import type { Clock } from '../../clock.js';
import type { Config } from '../../config.js';
import { checkDenylist, type ScreeningVerdict } from '../../domain/screening.js';
import { DenylistFile } from './list-file.js';
import { ScreeningProvider, type Recipient } from './provider.js';

export type { Recipient, ScreeningVerdict };

export interface Screener {
  /** The verdict on each recipient, in order. With only a list set, it answers without any I/O. */
  screen(recipients: readonly Recipient[]): Promise<ScreeningVerdict[]>;
  close(): Promise<void>;
}

type ScreeningConfig = Pick<Config, 'screeningListFile' | 'screeningUrl' | 'screeningSecret' | 'screeningTimeoutSeconds' | 'screeningFail'>;

export async function createScreener(config: ScreeningConfig, clock: Clock, log: Logger): Promise<Screener> {
  const list = config.screeningListFile === null ? null : await DenylistFile.open(config.screeningListFile, log);
  const provider =
    config.screeningUrl === null
      ? null
      : new ScreeningProvider(
          { url: config.screeningUrl, secret: config.screeningSecret!, timeoutSeconds: config.screeningTimeoutSeconds, fail: config.screeningFail },
          clock,
          log,
        );
  return {
    async screen(recipients) {
      const verdicts: ScreeningVerdict[] = list ? checkDenylist(list.current, recipients) : recipients.map(() => ({ hit: false }));
      if (provider) {
        const unlisted = recipients.flatMap((recipient, i) => (verdicts[i]!.hit ? [] : [{ recipient, i }]));
        if (unlisted.length > 0) (await provider.screen(unlisted.map((u) => u.recipient))).forEach((verdict, j) => (verdicts[unlisted[j]!.i] = verdict));
      }
      return verdicts;
    },
    async close() {
      await list?.close();
    },
  };
}

/** The recipients a screening refused, as `chain` names for a message (never the list's source). */
export function screenedChains(recipients: readonly Recipient[], verdicts: readonly ScreeningVerdict[]): string[] {
  return recipients.flatMap((r, i) => (verdicts[i]!.hit ? [r.chain] : []));
}
