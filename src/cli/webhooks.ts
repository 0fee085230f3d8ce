// `stableroute webhooks secret`: a new webhook signing secret in the Standard Webhooks form ("whsec_" + base64 of
// 32 random bytes), for WEBHOOK_SIGNING_SECRET and for the receiver's Standard Webhooks library alike (decision 66).
// Reads no configuration and no database, so it works while a refused WEBHOOK_SIGNING_SECRET is being replaced.
import { parseArgs } from 'node:util';
import { generateWebhookSecret } from '../webhooks/secret.js';

const USAGE = 'usage: stableroute webhooks secret [--json]\n';

export async function webhooksCommand(args: string[]): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({ args, allowPositionals: true, options: { json: { type: 'boolean', default: false } } });
  } catch (error) {
    process.stderr.write(`webhooks: ${(error as Error).message}\n${USAGE}`);
    return 2;
  }
  if (parsed.positionals.length !== 1 || parsed.positionals[0] !== 'secret') {
    process.stderr.write(USAGE);
    return 2;
  }
  const secret = generateWebhookSecret();
  process.stdout.write(parsed.values.json ? `${JSON.stringify({ webhook_signing_secret: secret })}\n` : `${secret}\n`);
  return 0;
}
