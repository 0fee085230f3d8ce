// The operator CLI. Each command is a small function; exit codes: 0 ok, 1 failure, 2 usage.
import { parseArgs } from 'node:util';
import { ConfigError, loadConfig, tokensOfConfig, type Config } from '../config.js';
import { createMerchant, merchantInputProblem } from '../core/merchants/merchants.js';
import { migrate } from '../db/migrate.js';
import { createPool } from '../db/pool.js';
import { verifyLedger } from '../ledger/verify.js';
import { auditMigrationSteps, currentAuditHead } from '../core/operators/audit.js';
import { verifyAudit, type AuditExpectation } from '../core/operators/audit-verify.js';
import type { AppContext } from '../core/context.js';
import { cancelPayment } from '../core/operators/transitions/cancel.js';
import { resolveManualReview } from '../core/operators/transitions/resolve.js';
import { reconcile } from '../core/treasury/reconcile.js';
import { devnetCommand } from './devnet.js';
import { devnetFundCommand } from './devnet-fund.js';
import { exportCommand } from './export.js';
import { merchantsKeysCommand } from './keys.js';
import { intentsApprovalCommand, merchantsAddressesCommand, merchantsPolicyCommand, type CliHelpers } from './policies.js';
import { merchantWebhookCommand } from './merchant-webhooks.js';
import { operatorsCommand } from './operators.js';
import { destinationPolicy } from '../webhook-client/destination-guard.js';
import { treasuryCommand } from './treasury.js';
import { booksCommand } from './books.js';
import { batchesCommand } from './batches.js';
import { webhooksCommand } from './webhooks.js';
import { intentsRefundCommand, simulateCommand } from './transfers.js';
import { systemClock } from '../clock.js';
import { createLogger, openDatabase, prepareDatabase, startRuntime, type Roles } from '../runtime.js';
import { refusable } from './exits.js';
import { cliAudit, recordingRefusals } from './actor.js';

const USAGE = `usage: stableroute <command>

  serve                      API and background workers (what npm start runs)
  api                        HTTP API only
  worker                     background workers only
  migrate                    apply database migrations and exit
  merchants create --name NAME --webhook-url URL [--json]
                             onboard a merchant; prints its API key and webhook secret once
  merchants policy MERCHANT_ID [--max-payment-usd N|none|default] [--daily-limit-usd N|none|default]
                   [--allowlist on|off|default] [--approval-above-usd N|none|default]
                   [--approval-above-usd-per-day N|none|default] [--rate-limit-per-minute N|default] [--reset] [--json]
                             show (and change) a merchant's spending policy in force
  merchants addresses add|remove|list MERCHANT_ID --chain C --address A [--label L] [--json]
                             the merchant's address book (recipients allowed when its allowlist is on)
  merchants keys create|list MERCHANT_ID [--json]
  merchants keys revoke MERCHANT_ID --key KEY_ID|PREFIX|KEY [--json]
                             API key rotation: a new key is printed once; several stay active until revoked;
                             a revoked key is refused (401) from the next request on
  merchants webhook-secret rotate MERCHANT_ID [--overlap-seconds N] [--json]
                             a new webhook signing secret, shown once; the previous one keeps signing for
                             N seconds (default WEBHOOK_SECRET_OVERLAP_SECONDS, 1 day)
  merchants webhook-secret end-overlap MERCHANT_ID [--json]
                             stop signing with previous secrets now
  merchants webhook enable MERCHANT_ID [--json]
                             enable an endpoint a 410 Gone disabled; queues the events held meanwhile
  ledger verify [--json]     recompute balances from postings; exit 1 on any difference
  audit verify [--expect SEQ:HASH ...] [--json]
                             check the audit log's keyed hash chain (AUDIT_KEY), that it still holds each
                             expected record (a head printed earlier) and every line of AUDIT_ANCHOR_FILE;
                             exit 1 naming the first broken record
  audit head [--json]        the last record's number and hash, to keep where the database's admins cannot write
  export payments|ledger --from ISO --to ISO [--chain C] [--merchant-id M] [--status S] [--out FILE]
                             payments (one row each) or ledger postings of the period [from, to) as CSV, to
                             stdout or FILE: the bytes of GET /admin/exports/*.csv; recorded in the audit log
  intents resolve ID --settled|--failed|--replace|--retry|--cancel-on-chain [--force] [--json]
                             resolve a payment intent in manual_review (--retry: one more execution
                             attempt, when nothing of it is on chain; --cancel-on-chain: a zero-value
                             self-send on the stuck Ethereum nonce; the payment fails once it is final;
                             --replace screens every recipient it pays again: a hit refuses it unless
                             two different operators each run --replace --force)
                             --failed --force over a transfer that may still land only requests it:
                             another operator approves it (intents approve ID) before the payment fails
  intents cancel ID [--json] cancel a payment not yet on chain; releases its funds
  intents approve|reject ID [--reason TEXT] [--json]
                             decide on a payment waiting for approval (approve queues it; reject fails it, funds released),
                             or on a forced failure another operator requested (approve fails it; reject drops the request)
  intents approvals [--json] list the payments waiting for approval (a payout batch held whole is one entry)
  batches approve|reject PAYOUT_BATCH_ID [--reason TEXT] [--json]
                             decide on a payout batch held whole: every payment in it is queued, or fails
                             (approval_rejected, funds released)
  intents refund ID --tx TX_ID [--json]
                             book an inbound USDC transfer the deposit scanner saw (from the payout's
                             destination, same chain, no more than the payout) as the settled payment's refund
  reconcile [--json]         compare ledger treasury balances with on-chain USDC balances
  books list [--json]        chains whose signing is held since the database history changed (a failover, a
                             restore), with the treasury transactions and nonces the books do not know
  books attach --chain C --tx TX_ID [--payment PAYMENT_INTENT_ID ...] [--json]
                             record such a transaction as the attempt of the payments it paid (by memo, or
                             recipient and amount; --payment names them in its order): they settle, never paid again
  books foreign --chain C (--tx TX_ID | --nonce N) --reason TEXT [--json]
                             declare it paid none of our payments; takes two different operators
  treasury withdraw --chain C --to ADDRESS --usdc N [--token T] [--idempotency-key KEY] [--json]
                             send treasury USDC out (reserved from available funds, then signed and
                             confirmed like a payout by the workers); prints the withdrawal id
  simulate transfer --chain C --from ADDRESS --to ADDRESS [--usdc N] [--native N] [--json]
                             a transfer from outside on a simulated chain (a deposit, a returned payout)
  devnet [--json]            start local Ethereum (anvil) and Solana (LiteSVM) chains for real-chain mode
  devnet --chains NAME,... [--json]
                             also one anvil per named EVM chain (base, arbitrum, ...), each with a local chain id;
                             prints CHAINS and each chain's NAME_* settings
  devnet fund --chain C --to ADDRESS [--usdc N] [--usdt N] [--pyusd N] [--native N] [--from ADDRESS] [--json]
                             against the running devnet (NAME_RPC_URL, NAME_<TOKEN>_ADDRESS, SOLANA_RPC_URL):
                             mint test tokens and send native currency to ADDRESS; with --from, send as that address
                             (anvil impersonation; Solana: processed without signature verification)
  devnet --signer pkcs11 [--json]
                             the devnet, with both treasury keys generated inside a new SoftHSM2 token;
                             prints the signer settings (PKCS11_*), never a key
  webhooks secret [--json]   print a new webhook signing secret (whsec_...) for WEBHOOK_SIGNING_SECRET
  operators create --name NAME --role viewer|operator|approver|admin [--json]
                             a named operator for the admin API and the console; prints its token once
  operators list [--json]    operators, their roles and status
  operators disable ID [--json]
                             refuse the operator's token from the next request on, in every process
  operators token rotate ID [--json]
                             a new token for the operator, shown once; the old one is refused from then on
`;

type Command = (args: string[], config: Config) => Promise<number>;

function out(line: string): void {
  process.stdout.write(`${line}\n`);
}

async function withDatabase<T>(config: Config, fn: (pool: ReturnType<typeof createPool>, url: string) => Promise<T>): Promise<T> {
  const log = createLogger({ logLevel: config.logLevel === 'info' ? 'warn' : config.logLevel });
  const { url, embedded } = await openDatabase(config, log);
  const pool = createPool(url, 4);
  try {
    await migrate(pool, auditMigrationSteps(config));
    return await fn(pool, url);
  } finally {
    await pool.end();
    await embedded?.stop();
  }
}

/** A full context (adapters, queue) without HTTP or workers, for one-shot operator commands. */
async function withContext<T>(config: Config, fn: (ctx: AppContext) => Promise<T>): Promise<T> {
  const runtime = await startRuntime(config, { api: false, workers: false }, {
    log: createLogger({ logLevel: config.logLevel === 'info' ? 'warn' : config.logLevel }),
  });
  try {
    return await fn(runtime.ctx);
  } finally {
    await runtime.stop();
  }
}

const helpers: CliHelpers = { withDatabase, withContext, out };

/** `SEQ:HASH` as `audit head` prints them; null when it is not. */
function expectation(text: string): AuditExpectation | null {
  const match = /^([0-9]{1,18}):([0-9a-fA-F]{64})$/.exec(text.trim());
  return match === null ? null : { seq: BigInt(match[1]!), hash: match[2]!.toLowerCase() };
}

function serveCommand(roles: Roles): Command {
  return async (_args, config) => {
    const runtime = await startRuntime(config, roles);
    await new Promise<void>((resolve) => {
      const shutdown = (signal: string) => {
        runtime.ctx.log.info({ signal }, 'shutting down');
        runtime.stop().then(resolve, (error: unknown) => {
          runtime.ctx.log.error({ err: error }, 'shutdown failed');
          resolve();
        });
      };
      process.once('SIGTERM', () => shutdown('SIGTERM'));
      process.once('SIGINT', () => shutdown('SIGINT'));
    });
    return 0;
  };
}

const commands: Record<string, Command> = {
  serve: serveCommand({ api: true, workers: true }),
  api: serveCommand({ api: true, workers: false }),
  worker: serveCommand({ api: false, workers: true }),

  migrate: async (_args, config) =>
    withDatabase(config, async (pool, url) => {
      // The job queue's own tables too, so a migrated database is ready for every role.
      const { boss } = await prepareDatabase(pool, config, url, { supervise: false });
      await boss.stop({ graceful: false, wait: true });
      out('migrations applied');
      return 0;
    }),

  merchants: async (args, config) => {
    if (args[0] === 'policy') return merchantsPolicyCommand(args.slice(1), config, helpers);
    if (args[0] === 'addresses') return merchantsAddressesCommand(args.slice(1), config, helpers);
    if (args[0] === 'keys') return merchantsKeysCommand(args.slice(1), config, helpers);
    if (args[0] === 'webhook' || args[0] === 'webhook-secret') return merchantWebhookCommand(args, config, withDatabase);
    const { values, positionals } = parseArgs({
      args,
      allowPositionals: true,
      options: { name: { type: 'string' }, 'webhook-url': { type: 'string' }, json: { type: 'boolean', default: false } },
    });
    if (positionals[0] !== 'create' || values.name === undefined) {
      process.stderr.write('usage: stableroute merchants create --name NAME --webhook-url URL [--json]\n');
      process.stderr.write('       stableroute merchants policy|addresses|keys ... (stableroute help)\n');
      return 2;
    }
    const input = { name: values.name.trim(), webhookUrl: values['webhook-url']?.trim() || null };
    const problem = merchantInputProblem(input, destinationPolicy(config));
    if (problem !== null) {
      process.stderr.write(`${problem}\n`);
      return 2;
    }
    return withDatabase(config, async (pool) => {
      const audit = cliAudit('merchant.create', [], { name: input.name, webhook_url: input.webhookUrl });
      const { merchant, apiKey, webhookSecret } = await recordingRefusals({ pool, config }, audit, () => createMerchant(pool, config, input, systemClock.now(), audit));
      if (values.json) {
        out(
          JSON.stringify({
            merchant_id: merchant.id,
            api_key: apiKey,
            name: merchant.name,
            webhook_url: merchant.webhook_url,
            webhook_secret: webhookSecret,
          }),
        );
      } else {
        out(`merchant_id:    ${merchant.id}`);
        out(`api_key:        ${apiKey}`);
        out(`webhook_secret: ${webhookSecret}`);
        out('The API key and the webhook secret are shown only this once; store them now.');
      }
      return 0;
    });
  },

  ledger: async (args, config) => {
    const { values, positionals } = parseArgs({ args, allowPositionals: true, options: { json: { type: 'boolean', default: false } } });
    if (positionals[0] !== 'verify') {
      process.stderr.write('usage: stableroute ledger verify [--json]\n');
      return 2;
    }
    return withDatabase(config, async (pool) => {
      const report = await verifyLedger(pool);
      if (values.json) out(JSON.stringify(report));
      else {
        out(`ledger: ${report.transactions} transactions, ${report.postings} postings, ${report.accounts} accounts`);
        for (const p of report.problems) out(`DIFFERENCE ${p.check}: ${p.detail}`);
        out(report.ok ? 'OK: every balance equals the sum of its postings and every transaction balances' : `FAILED: ${report.problems.length} problem(s)`);
      }
      return report.ok ? 0 : 1;
    });
  },

  audit: async (args, config) => {
    const { values, positionals } = parseArgs({
      args,
      allowPositionals: true,
      options: { json: { type: 'boolean', default: false }, expect: { type: 'string', multiple: true, default: [] } },
    });
    const expectations = values.expect.map(expectation);
    const command = positionals.length === 1 ? positionals[0] : undefined;
    if ((command !== 'verify' && command !== 'head') || expectations.includes(null) || (command === 'head' && expectations.length > 0)) {
      process.stderr.write('usage: stableroute audit verify [--expect SEQ:HASH ...] [--json]\n       stableroute audit head [--json]\n');
      return 2;
    }
    if (command === 'head') {
      return withDatabase(config, async (pool) => {
        const head = await currentAuditHead(pool);
        out(values.json ? JSON.stringify(head) : `head: record ${head.seq}, hash ${head.hash}`);
        return 0;
      });
    }
    return withDatabase(config, async (pool) => {
      const proof = await verifyAudit({ pool, config }, expectations as AuditExpectation[]);
      if (values.json) out(JSON.stringify(proof));
      else if (proof.ok) {
        const unkeyed = proof.unkeyed_records > 0 ? ` (the first ${proof.unkeyed_records} written before AUDIT_KEY: they prove less)` : '';
        out(`OK: ${proof.records} audit records, each chained to the one before it${unkeyed}`);
        if (proof.expectations > 0) out(`OK: the log holds the ${proof.expectations} expected record(s)`);
        if (proof.anchor !== null) {
          const skipped = proof.anchor.unreadable > 0 ? `; ${proof.anchor.unreadable} unreadable line(s) skipped` : '';
          out(`OK: the log holds the ${proof.anchor.lines} record(s) of AUDIT_ANCHOR_FILE, the latest ${proof.anchor.latest_seq ?? 'none'}${skipped}`);
        }
      } else out(`BROKEN at record ${proof.seq}: ${proof.problem} (${proof.records} records before it verified)`);
      return proof.ok ? 0 : 1;
    });
  },
};

commands.intents = async (args, config) => {
  if (args[0] === 'approve' || args[0] === 'reject' || args[0] === 'approvals') return intentsApprovalCommand(args, config, helpers);
  if (args[0] === 'refund') return intentsRefundCommand(args, config, helpers);
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      settled: { type: 'boolean', default: false },
      failed: { type: 'boolean', default: false },
      replace: { type: 'boolean', default: false },
      retry: { type: 'boolean', default: false },
      'cancel-on-chain': { type: 'boolean', default: false },
      force: { type: 'boolean', default: false },
      json: { type: 'boolean', default: false },
    },
  });
  const flags = { settled: 'settled', failed: 'failed', replace: 'replace', retry: 'retry', 'cancel-on-chain': 'cancel_on_chain' } as const;
  const chosen = (Object.keys(flags) as (keyof typeof flags)[]).filter((flag) => values[flag]).map((flag) => flags[flag]);
  const cancel = positionals[0] === 'cancel' && positionals[1] && chosen.length === 0;
  if (!cancel && (positionals[0] !== 'resolve' || !positionals[1] || chosen.length !== 1)) {
    process.stderr.write('usage: stableroute intents resolve PAYMENT_INTENT_ID --settled|--failed|--replace|--retry|--cancel-on-chain [--force] [--json]\n');
    process.stderr.write('       stableroute intents cancel PAYMENT_INTENT_ID [--json]\n');
    process.stderr.write('       stableroute intents approve|reject PAYMENT_INTENT_ID [--reason TEXT] [--json]\n');
    process.stderr.write('       stableroute intents refund PAYMENT_INTENT_ID --tx TX_ID [--json]\n');
    return 2;
  }
  const audit = cancel
    ? cliAudit('payment.cancel', [positionals[1]!])
    : cliAudit('payment.resolve', [positionals[1]!], { resolution: chosen[0], force: values.force });
  return withContext(config, async (ctx) => {
    return refusable(async () => {
      const act = () => (cancel ? cancelPayment(ctx, positionals[1]!, audit) : resolveManualReview(ctx, positionals[1]!, chosen[0]!, { force: values.force, audit }));
      const result = await recordingRefusals(ctx, audit, act);
      const waits = result.approval === 'pending' ? '; the forced failure waits for another operator (intents approve|reject)' : '';
      out(values.json ? JSON.stringify(result) : `${result.payment_intent_id}: ${result.status}${result.tx_id ? ` (tx ${result.tx_id})` : ''}${waits}`);
      return 0;
    });
  });
};

commands.reconcile = async (args, config) => {
  const { values } = parseArgs({ args, options: { json: { type: 'boolean', default: false } } });
  return withContext(config, async (ctx) => {
    const report = await reconcile(ctx.pool, ctx.adapters, tokensOfConfig(ctx.config));
    if (values.json) out(JSON.stringify(report));
    else {
      for (const r of report) {
        out(
          `${r.chain.padEnd(9)} ${r.status.padEnd(9)} ledger ${r.ledger_usdc} USDC, on chain ${r.on_chain_usdc ?? '?'} USDC, difference ${r.difference_usdc ?? '?'} (in flight ${r.in_flight_usdc}${r.landed_usdc === null ? '' : `, landed ${r.landed_usdc}`})${r.error ? ` ${r.error}` : ''}`,
        );
      }
    }
    return report.every((r) => r.status === 'ok' || r.status === 'in_flight') ? 0 : 1;
  });
};

commands.treasury = async (args, config) => treasuryCommand(args, config, helpers);
commands.books = async (args, config) => booksCommand(args, config, helpers);
commands.batches = async (args, config) => batchesCommand(args, config, helpers);
commands.export = async (args, config) => exportCommand(args, config, helpers);
commands.operators = async (args, config) => operatorsCommand(args, config, helpers);

commands.devnet = async (args, config) => (args[0] === 'fund' ? devnetFundCommand(args.slice(1), config) : devnetCommand(args));
commands.simulate = async (args, config) => simulateCommand(args, config, helpers);

export async function main(argv: string[]): Promise<number> {
  const [name, ...args] = argv;
  if (!name || name === 'help' || name === '--help' || name === '-h') {
    process.stdout.write(USAGE);
    return name ? 0 : 2;
  }
  // Before the configuration is read: a new secret is what fixes a WEBHOOK_SIGNING_SECRET it refuses.
  if (name === 'webhooks') return webhooksCommand(args);
  const command = commands[name];
  if (!command) {
    process.stderr.write(`unknown command "${name}"\n\n${USAGE}`);
    return 2;
  }
  let config: Config;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`configuration error: ${error.message}\n`);
      return 1;
    }
    throw error;
  }
  try {
    return await command(args, config);
  } catch (error) {
    // A mistyped flag is a usage error (2), never confused with a refused operation (1).
    if ((error as NodeJS.ErrnoException).code?.startsWith('ERR_PARSE_ARGS')) {
      process.stderr.write(`${name}: ${(error as Error).message}\n\n${USAGE}`);
      return 2;
    }
    process.stderr.write(`${name} failed: ${error instanceof Error ? error.message : String(error)}\n`);
    return 1;
  }
}
