// Devnet-only RPC methods (never on a real cluster): `stableroute_transfer`, what `stableroute devnet fund --chain
// solana` calls. It builds real transactions (SOL transfer, a transferChecked per token (USDC, USDT: SPL Token; PYUSD:
// Token-2022), the recipient's token account created when missing) and processes them WITHOUT signature verification, so a transfer can be sent as any address:
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
import { getCreateAssociatedTokenIdempotentInstruction, getTransferCheckedInstruction } from '@solana-program/token';
import { DEVNET_TOKENS, type DevnetToken } from '../tokens.js';
import type { SolanaDevnetChain } from './chain.js';
import type { Methods } from './common.js';
import { ataOf, creditAccounts } from './fund.js';
import { amountOf, type DevnetMints } from './mints.js';
import { configParam, invalidParams } from './json.js';
import { describeTransactionError } from './tx-errors.js';

const TRANSFERS_MAX = 10;
const REPEAT_MAX = 1000;
/** Token accounts whose address is remembered (deriving one is slow: a hash and a curve check per bump). */
const ACCOUNTS_REMEMBERED_MAX = 1024;
/** SOL a sender is topped up to beyond what it sends: fees and new token accounts' rent. */
const FEE_ALLOWANCE_LAMPORTS = 10_000_000n;

interface TransferAsk {
  from: Address | null;
  to: Address;
  micros: Record<DevnetToken, bigint>;
  lamports: bigint;
  repeat: number;
}

export function devnetMethods(chain: SolanaDevnetChain, mints: DevnetMints): Methods {
  const accounts = new Map<string, Promise<Address>>();
  const remembered = (token: DevnetToken, owner: Address) => {
    const key = `${token}:${owner}`;
    let found = accounts.get(key);
    if (!found) {
      if (accounts.size >= ACCOUNTS_REMEMBERED_MAX) accounts.clear();
      found = ataOf(mints[token], owner);
      accounts.set(key, found);
    }
    return found;
  };
  const accountsOf = async (owner: Address, ask: TransferAsk) => {
    const moved = DEVNET_TOKENS.filter((token) => ask.micros[token] > 0n);
    return Object.fromEntries(await Promise.all(moved.map(async (token) => [token, await remembered(token, owner)] as const))) as Partial<Record<DevnetToken, Address>>;
  };
  return {
    // params: [{ transfers: [{ to, from?, usdc_micros?, usdt_micros?, pyusd_micros?, lamports?, repeat? }] }]
    //   -> { slot, signatures }
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
          const [sources, destinations] = await Promise.all([accountsOf(from, ask), accountsOf(ask.to, ask)]);
          return { ...ask, from, sources, destinations, faucet: ask.from === null };
        }),
      );
      for (const plan of planned) checkFunds(chain, plan);
      const slot = chain.slotAt('processed');
      const signatures = planned.flatMap((plan) => transfer(chain, mints, plan));
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
    micros: { usdc: amountOf('usdc_micros'), usdt: amountOf('usdt_micros'), pyusd: amountOf('pyusd_micros') },
    lamports: amountOf('lamports'),
    repeat,
  };
  if (ask.lamports === 0n && DEVNET_TOKENS.every((token) => ask.micros[token] === 0n)) {
    throw invalidParams('a transfer moves lamports, usdc_micros, usdt_micros or pyusd_micros');
  }
  return ask;
}

interface PlannedTransfer extends TransferAsk {
  from: Address;
  /** The sender's and the recipient's token account of each token moved. */
  sources: Partial<Record<DevnetToken, Address>>;
  destinations: Partial<Record<DevnetToken, Address>>;
  faucet: boolean;
}

/** A sender (not the faucet, which is credited) must hold the tokens it sends. */
function checkFunds(chain: SolanaDevnetChain, plan: PlannedTransfer): void {
  if (plan.faucet) return;
  for (const token of DEVNET_TOKENS) {
    if (plan.micros[token] === 0n) continue;
    const account = chain.svm.getAccount(plan.sources[token]!);
    const balance = account.exists ? amountOf(account.data) : 0n;
    const sent = plan.micros[token] * BigInt(plan.repeat);
    if (balance < sent) throw invalidParams(`${plan.from} holds ${balance} ${token.toUpperCase()} micro-units, less than the ${sent} to send`);
  }
}

function transfer(chain: SolanaDevnetChain, mints: DevnetMints, ask: PlannedTransfer): string[] {
  const svm = chain.svm;
  const { from } = ask;
  // The faucet gets what it sends; any sender gets enough SOL for fees and rent.
  const wallet = svm.getAccount(from);
  const held = wallet.exists ? wallet.lamports : 0n;
  const copies = BigInt(ask.repeat);
  const needed = (ask.lamports + FEE_ALLOWANCE_LAMPORTS) * copies;
  const faucet = (token: DevnetToken) => (ask.faucet ? ask.micros[token] * copies : 0n);
  creditAccounts(svm, mints, from, ask.sources, {
    usdcMicros: faucet('usdc'),
    usdtMicros: faucet('usdt'),
    pyusdMicros: faucet('pyusd'),
    lamports: held < needed ? needed - held : 0n,
  });
  const sender = createNoopSigner(from);
  const instructions: Instruction[] = [];
  if (ask.lamports > 0n) instructions.push(getTransferSolInstruction({ source: sender, destination: ask.to, amount: ask.lamports }));
  for (const token of DEVNET_TOKENS) {
    const amount = ask.micros[token];
    if (amount === 0n) continue;
    const mint = mints[token];
    const [source, destination] = [ask.sources[token]!, ask.destinations[token]!];
    if (!svm.getAccount(destination).exists) {
      instructions.push(
        getCreateAssociatedTokenIdempotentInstruction({ payer: sender, ata: destination, owner: ask.to, mint: mint.address, tokenProgram: mint.programAddress }),
      );
    }
    instructions.push(
      getTransferCheckedInstruction(
        { source, mint: mint.address, destination, authority: sender, amount, decimals: mint.decimals },
        { programAddress: mint.programAddress },
      ),
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
