// Devnet-only RPC methods (never on a real cluster): `stableroute_transfer`, what `stableroute devnet fund --chain
// solana` calls. It builds real transactions (SOL transfer, USDC transferChecked, the recipient's token account
// created when missing) and processes them WITHOUT signature verification, so a transfer can be sent as any address:
// a payout's recipient sending it back. Without `from`, a fresh faucet address is credited first (as fund.ts credits
// a treasury) and sends; either way the recipient sees an ordinary transaction in its history. The handler derives
// addresses first (async), then checks and processes every transfer of the call in one synchronous step: all in the
// same slot, none if one cannot be sent. A transfer may ask to be sent `repeat` times: copies of one transaction with
// their own ids (chain.ts, executeUnverified), to build a long history quickly.
import { randomBytes } from 'node:crypto';
import {
  appendTransactionMessageInstructions,
  compileTransaction,
  createNoopSigner,
  createTransactionMessage,
  getAddressDecoder,
  getTransactionEncoder,
  isAddress,
  pipe,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  type Address,
  type Blockhash,
  type Instruction,
  type SignatureBytes,
} from '@solana/kit';
import { getTransferSolInstruction } from '@solana-program/system';
import {
  findAssociatedTokenPda,
  getCreateAssociatedTokenIdempotentInstruction,
  getTokenDecoder,
  getTransferCheckedInstruction,
  TOKEN_PROGRAM_ADDRESS,
} from '@solana-program/token';
import type { SolanaDevnetChain } from './chain.js';
import type { Methods } from './common.js';
import { creditAccounts } from './fund.js';
import { configParam, invalidParams } from './json.js';
import { describeTransactionError } from './tx-errors.js';

const TRANSFERS_MAX = 10;
const REPEAT_MAX = 1000;
/** Owners whose token account address is remembered (deriving one is slow: a hash and a curve check per bump). */
const ACCOUNTS_REMEMBERED_MAX = 1024;
/** SOL a sender is topped up to beyond what it sends: fees and a new token account's rent. */
const FEE_ALLOWANCE_LAMPORTS = 10_000_000n;
const USDC_DECIMALS = 6;
const TOKEN_ACCOUNT_BYTES = 165;

interface TransferAsk {
  from: Address | null;
  to: Address;
  usdcMicros: bigint;
  lamports: bigint;
  repeat: number;
}

export function devnetMethods(chain: SolanaDevnetChain, mint: Address): Methods {
  const accounts = new Map<Address, Promise<Address>>();
  const ataOf = (owner: Address) => {
    let found = accounts.get(owner);
    if (!found) {
      if (accounts.size >= ACCOUNTS_REMEMBERED_MAX) accounts.clear();
      found = findAssociatedTokenPda({ owner, mint, tokenProgram: TOKEN_PROGRAM_ADDRESS }).then(([ata]) => ata);
      accounts.set(owner, found);
    }
    return found;
  };
  return {
    // params: [{ transfers: [{ to, from?, usdc_micros?, lamports?, repeat? }] }] -> { slot, signatures }
    stableroute_transfer: async (params) => {
      const config = configParam(params, 0);
      const raw = config.transfers;
      if (!Array.isArray(raw) || raw.length === 0 || raw.length > TRANSFERS_MAX) {
        throw invalidParams(`transfers must be a list of 1 to ${TRANSFERS_MAX}`);
      }
      const asks = raw.map(parseAsk);
      // Addresses first (async), then every transfer in one synchronous step: one slot, no request in between.
      const planned = await Promise.all(
        asks.map(async (ask) => {
          const from = ask.from ?? getAddressDecoder().decode(randomBytes(32));
          const [source, destination] = await Promise.all([ataOf(from), ataOf(ask.to)]);
          return { ...ask, from, source, destination, faucet: ask.from === null };
        }),
      );
      for (const plan of planned) checkFunds(chain, plan);
      const slot = chain.slotAt('processed');
      const signatures = planned.flatMap((plan) => transfer(chain, mint, plan));
      return { slot, signatures };
    },
  };
}

function parseAsk(value: unknown): TransferAsk {
  if (typeof value !== 'object' || value === null) throw invalidParams('each transfer is an object');
  const v = value as Record<string, unknown>;
  const addressOf = (key: string) => {
    const text = v[key];
    if (typeof text !== 'string' || !isAddress(text)) throw invalidParams(`${key} must be a Solana address`);
    return text;
  };
  const amountOf = (key: string) => {
    const text = v[key] ?? '0';
    if (typeof text !== 'string' || !/^\d{1,30}$/.test(text)) throw invalidParams(`${key} must be a decimal string of an integer`);
    return BigInt(text);
  };
  const repeat = v.repeat ?? 1;
  if (typeof repeat !== 'number' || !Number.isInteger(repeat) || repeat < 1 || repeat > REPEAT_MAX) throw invalidParams(`repeat must be an integer from 1 to ${REPEAT_MAX}`);
  const ask = {
    from: v.from === undefined ? null : addressOf('from'),
    to: addressOf('to'),
    usdcMicros: amountOf('usdc_micros'),
    lamports: amountOf('lamports'),
    repeat,
  };
  if (ask.usdcMicros === 0n && ask.lamports === 0n) throw invalidParams('a transfer moves usdc_micros, lamports or both');
  return ask;
}

interface PlannedTransfer extends TransferAsk {
  from: Address;
  source: Address;
  destination: Address;
  faucet: boolean;
}

/** A sender (not the faucet, which is credited) must hold the USDC it sends. */
function checkFunds(chain: SolanaDevnetChain, plan: PlannedTransfer): void {
  if (plan.faucet || plan.usdcMicros === 0n) return;
  const account = chain.svm.getAccount(plan.source);
  const balance = account.exists ? getTokenDecoder().decode(account.data.subarray(0, TOKEN_ACCOUNT_BYTES)).amount : 0n;
  const sent = plan.usdcMicros * BigInt(plan.repeat);
  if (balance < sent) throw invalidParams(`${plan.from} holds ${balance} USDC micro-units, less than the ${sent} to send`);
}

function transfer(chain: SolanaDevnetChain, mint: Address, ask: PlannedTransfer): string[] {
  const svm = chain.svm;
  const { from, source, destination } = ask;
  // The faucet gets what it sends; any sender gets enough SOL for fees and rent.
  const wallet = svm.getAccount(from);
  const held = wallet.exists ? wallet.lamports : 0n;
  const copies = BigInt(ask.repeat);
  const needed = (ask.lamports + FEE_ALLOWANCE_LAMPORTS) * copies;
  creditAccounts(svm, mint, from, source, { usdcMicros: ask.faucet ? ask.usdcMicros * copies : 0n, lamports: held < needed ? needed - held : 0n });
  const sender = createNoopSigner(from);
  const instructions: Instruction[] = [];
  if (ask.lamports > 0n) instructions.push(getTransferSolInstruction({ source: sender, destination: ask.to, amount: ask.lamports }));
  if (ask.usdcMicros > 0n) {
    if (!svm.getAccount(destination).exists) {
      instructions.push(
        getCreateAssociatedTokenIdempotentInstruction({ payer: sender, ata: destination, owner: ask.to, mint, tokenProgram: TOKEN_PROGRAM_ADDRESS }),
      );
    }
    instructions.push(
      getTransferCheckedInstruction({ source, mint, destination, authority: sender, amount: ask.usdcMicros, decimals: USDC_DECIMALS }),
    );
  }
  const { blockhash, lastValidBlockHeight } = chain.latestBlockhash('processed');
  const message = pipe(
    createTransactionMessage({ version: 0 }),
    (m) => setTransactionMessageFeePayerSigner(sender, m),
    (m) => setTransactionMessageLifetimeUsingBlockhash({ blockhash: blockhash as Blockhash, lastValidBlockHeight }, m),
    (m) => appendTransactionMessageInstructions(instructions, m),
  );
  const compiled = compileTransaction(message);
  // Not a signature: 64 random bytes, so each transfer has its own id. Processed with verification off.
  const signatures = Object.fromEntries(Object.keys(compiled.signatures).map((key) => [key, new Uint8Array(randomBytes(64)) as SignatureBytes]));
  const wire = new Uint8Array(getTransactionEncoder().encode({ ...compiled, signatures }));
  const records = chain.executeUnverified(wire, ask.repeat);
  const failed = records.find((record) => record.err !== null);
  if (failed?.err) throw invalidParams(`the transfer failed: ${describeTransactionError(failed.err)}`);
  return records.map((record) => record.decoded.signature);
}
