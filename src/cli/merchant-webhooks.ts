// `stableroute merchants webhook ...` and `merchants webhook-secret ...`: an operator's hands on a merchant's webhook
// endpoint and signing secrets. Exit codes: 0 done, 1 refused (unknown merchant, no URL, the test merchant), 2 usage.
import { parseArgs } from 'node:util';
import { systemClock } from '../clock.js';
import type { Config } from '../config.js';
import { enableWebhookEndpoint } from '../core/webhooks/endpoint.js';
import { endWebhookSecretOverlap, rotateWebhookSecret } from '../core/webhooks/secrets.js';
import type { Pool } from '../db/pool.js';
import { refusable, usage } from './exits.js';
import { cliAudit, recordingRefusals } from './actor.js';

export const MERCHANT_WEBHOOK_USAGE = `usage: stableroute merchants webhook-secret rotate MERCHANT_ID [--overlap-seconds N] [--json]
       stableroute merchants webhook-secret end-overlap MERCHANT_ID [--json]
       stableroute merchants webhook enable MERCHANT_ID [--json]
`;

type WithDatabase = <T>(config: Config, fn: (pool: Pool) => Promise<T>) => Promise<T>;

function out(line: string): void {
  process.stdout.write(`${line}\n`);
}

export async function merchantWebhookCommand(args: string[], config: Config, withDatabase: WithDatabase): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: { json: { type: 'boolean', default: false }, 'overlap-seconds': { type: 'string' } },
  });
  const [group, action, merchantId, ...rest] = positionals;
  if (!merchantId || rest.length > 0) return usage(MERCHANT_WEBHOOK_USAGE);
  const command = `${group} ${action}`;
  if (values['overlap-seconds'] !== undefined && command !== 'webhook-secret rotate') return usage(MERCHANT_WEBHOOK_USAGE);
  let overlapSeconds = config.webhookSecretOverlapSeconds;
  if (values['overlap-seconds'] !== undefined) {
    overlapSeconds = Number(values['overlap-seconds']);
    if (!/^\d+(\.\d+)?$/.test(values['overlap-seconds']) || !Number.isFinite(overlapSeconds)) {
      process.stderr.write('--overlap-seconds must be a number of seconds >= 0\n');
      return 2;
    }
  }
  const now = systemClock.now();

  switch (command) {
    case 'webhook-secret rotate':
      return withDatabase(config, (pool) =>
        refusable(async () => {
          const audit = cliAudit('webhook_secret.rotate', [merchantId], { overlap_seconds: overlapSeconds });
          const result = await recordingRefusals({ pool, config }, audit, () => rotateWebhookSecret(pool, config, merchantId, now, overlapSeconds, audit));
          if (values.json) out(JSON.stringify(result));
          else {
            out(`webhook_secret: ${result.webhook_secret}`);
            out(
              result.previous_valid_until
                ? `The previous secret keeps signing deliveries until ${result.previous_valid_until}; both signatures are sent meanwhile.`
                : 'The previous secret no longer signs deliveries.',
            );
            out('The new secret is shown only this once; give it to the merchant now.');
          }
          return 0;
        }),
      );
    case 'webhook-secret end-overlap':
      return withDatabase(config, (pool) =>
        refusable(async () => {
          const audit = cliAudit('webhook_secret.end_overlap', [merchantId]);
          const result = await recordingRefusals({ pool, config }, audit, () => endWebhookSecretOverlap(pool, config, merchantId, now, audit));
          out(values.json ? JSON.stringify(result) : `${merchantId}: ${result.retired_secrets} previous secret(s) no longer sign deliveries`);
          return 0;
        }),
      );
    case 'webhook enable':
      return withDatabase(config, (pool) =>
        refusable(async () => {
          const audit = cliAudit('webhook_endpoint.enable', [merchantId]);
          const result = await recordingRefusals({ pool, config }, audit, () => enableWebhookEndpoint(pool, config, merchantId, now, audit));
          if (values.json) out(JSON.stringify(result));
          else out(`${merchantId}: webhook endpoint enabled${result.was_disabled ? '' : ' (it was not disabled)'}; ${result.requeued_events} held event(s) queued again`);
          return 0;
        }),
      );
    default:
      return usage(MERCHANT_WEBHOOK_USAGE);
  }
}
