// `stableroute merchants keys create|revoke|list MERCHANT_ID`: API key rotation (decision 91). A new key is printed
// once (with --json, as the last line's api_key); revocation takes effect on the next request in every process.
import { parseArgs } from 'node:util';
import type { Config } from '../config.js';
import { apiKeysOf, createApiKey, revokeApiKey, SHOWN_PREFIX_LENGTH, type ApiKeyRow } from '../core/merchants/api-keys.js';
import { systemClock } from '../clock.js';
import type { CliHelpers } from './policies.js';
import { refusable } from './exits.js';
import { cliAudit, recordingRefusals } from './actor.js';

export const KEYS_USAGE = `usage: stableroute merchants keys create MERCHANT_ID [--json]
       stableroute merchants keys revoke MERCHANT_ID --key KEY_ID|PREFIX|KEY [--json]
       stableroute merchants keys list MERCHANT_ID [--json]
`;

export function keyView(k: ApiKeyRow) {
  return {
    key_id: k.id,
    merchant_id: k.merchant_id,
    prefix: k.prefix,
    status: k.revoked_at ? 'revoked' : 'active',
    created_at: k.created_at.toISOString(),
    last_used_at: k.last_used_at?.toISOString() ?? null,
    revoked_at: k.revoked_at?.toISOString() ?? null,
  };
}

function line(k: ApiKeyRow): string {
  const v = keyView(k);
  return `${v.key_id}  ${(v.prefix ?? '(issued before key ids)').padEnd(24)} ${v.status.padEnd(7)} created ${v.created_at}  last used ${v.last_used_at ?? 'never'}${v.revoked_at ? `  revoked ${v.revoked_at}` : ''}`;
}

export async function merchantsKeysCommand(args: string[], config: Config, h: CliHelpers): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: { key: { type: 'string' }, json: { type: 'boolean', default: false } },
  });
  const [action, merchantId, ...rest] = positionals;
  const valid =
    merchantId !== undefined &&
    rest.length === 0 &&
    (action === 'revoke' ? Boolean(values.key?.trim()) : (action === 'create' || action === 'list') && values.key === undefined);
  if (!valid) {
    process.stderr.write(KEYS_USAGE);
    return 2;
  }
  return h.withDatabase(config, async (pool) => {
    return refusable(async () => {
      if (action === 'create') {
        const audit = cliAudit('api_key.create', [merchantId]);
        const { key, apiKey } = await recordingRefusals({ pool, config }, audit, () => createApiKey(pool, config, merchantId, systemClock.now(), audit));
        if (values.json) h.out(JSON.stringify({ ...keyView(key), api_key: apiKey }));
        else {
          h.out(`key_id:  ${key.id}`);
          h.out(`api_key: ${apiKey}`);
          h.out('The API key is shown only this once; store it now. Older keys stay active until revoked.');
        }
        return 0;
      }
      if (action === 'revoke') {
        // The key may be named by the whole key: only its shown prefix goes on record.
        const audit = cliAudit('api_key.revoke', [merchantId], { key_ref: values.key!.trim().slice(0, SHOWN_PREFIX_LENGTH) });
        const key = await recordingRefusals({ pool, config }, audit, () => revokeApiKey(pool, config, merchantId, values.key!.trim(), systemClock.now(), audit));
        const active = (await apiKeysOf(pool, merchantId)).filter((k) => !k.revoked_at).length;
        if (values.json) h.out(JSON.stringify({ ...keyView(key), active_keys: active }));
        else {
          h.out(`revoked ${line(key)}`);
          if (active === 0) h.out(`${merchantId} has no active API key left; \`merchants keys create\` issues one`);
        }
        return 0;
      }
      const keys = await apiKeysOf(pool, merchantId);
      if (values.json) h.out(JSON.stringify(keys.map(keyView)));
      else if (keys.length === 0) h.out('(no keys)');
      else for (const k of keys) h.out(line(k));
      return 0;
    });
  });
}
