// Sanctions screening of recipients (issue 29): the local denylist first (a map lookup, no I/O), then, for the
// recipients it lets through, the outside provider when SCREENING_URL is set. Built once by the runtime and held by the
// context, so every process has its own list in memory, kept fresh by its own watch (list-file.ts).
import type { Logger } from 'pino';
import type { Clock } from '../../clock.js';
import type { Config } from '../../config.js';
import { checkDenylist, type ScreeningVerdict } from '../../domain/screening.js';
import { ListAlerts, type ListAlertDeps } from './list-alerts.js';
import { DenylistFile } from './list-file.js';
import { ScreeningProvider, type Recipient, type ScreenOptions } from './provider.js';

export type { ListAlertDeps, Recipient, ScreeningVerdict, ScreenOptions };

export interface Screener {
  /**
   * The verdict on each recipient, in order. With only a list set, it answers without any I/O. `fresh`: the provider
   * is asked again whatever `allow` it gave before (a remembered `deny` still refuses): the screening before signing.
   */
  screen(recipients: readonly Recipient[], options?: ScreenOptions): Promise<ScreeningVerdict[]>;
  /**
   * Once the database is open: a refused reload of the list raises the operator alert `screening_list_rejected`, the
   * next accepted one resolves it (list-alerts.ts). Nothing without a list.
   */
  reportListTo(deps: ListAlertDeps): void;
  /** Reads the list file again now (what its watch does on a change), its verdict written once the promise resolves. */
  reloadList(): Promise<void>;
  close(): Promise<void>;
}

type ScreeningConfig = Pick<
  Config,
  'screeningListFile' | 'screeningListMaxDropPercent' | 'screeningUrl' | 'screeningSecret' | 'screeningTimeoutSeconds' | 'screeningFail'
>;

export async function createScreener(config: ScreeningConfig, clock: Clock, log: Logger): Promise<Screener> {
  const list = config.screeningListFile === null ? null : await DenylistFile.open(config.screeningListFile, config.screeningListMaxDropPercent, log);
  let alerts: ListAlerts | null = null;
  const provider =
    config.screeningUrl === null
      ? null
      : new ScreeningProvider(
          { url: config.screeningUrl, secret: config.screeningSecret!, timeoutSeconds: config.screeningTimeoutSeconds, fail: config.screeningFail },
          clock,
          log,
        );
  return {
    async screen(recipients, options = {}) {
      const verdicts: ScreeningVerdict[] = list ? checkDenylist(list.current, recipients) : recipients.map(() => ({ hit: false }));
      if (provider) {
        const unlisted = recipients.flatMap((recipient, i) => (verdicts[i]!.hit ? [] : [{ recipient, i }]));
        if (unlisted.length > 0) {
          (await provider.screen(unlisted.map((u) => u.recipient), options)).forEach((verdict, j) => (verdicts[unlisted[j]!.i] = verdict));
        }
      }
      return verdicts;
    },
    reportListTo(deps) {
      if (list && !alerts) alerts = new ListAlerts(list, deps);
    },
    async reloadList() {
      await list?.refresh({ force: true });
      await alerts?.settled();
    },
    async close() {
      await list?.close();
      await alerts?.close();
    },
  };
}

/** The recipients a screening refused, as `chain` names for a message (never the list's source). */
export function screenedChains(recipients: readonly Recipient[], verdicts: readonly ScreeningVerdict[]): string[] {
  return recipients.flatMap((r, i) => (verdicts[i]!.hit ? [r.chain] : []));
}
