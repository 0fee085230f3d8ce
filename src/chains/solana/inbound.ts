// Transfers into the treasury, for the deposit scanner (decisions 130-131): the finalized signatures of the treasury
// wallet and of its USDC token account, read oldest first; each transaction's balance deltas say what came in (USDC:
// the token account's increase; SOL: the wallet's). Deltas, not instruction parsing: they are right whichever program
// moved the funds. The position is the newest signature scanned of each of the two addresses.
import type { Address, Signature } from '@solana/kit';
import { ChainError, type InboundScan, type InboundTransfer } from '../port.js';
import { call, type RpcClient } from './rpc.js';

/** Transactions read per scan call (one getTransaction each). */
const INBOUND_TRANSACTIONS_PER_SCAN = 50;
/** getSignaturesForAddress pages walked back per address per scan (1,000 signatures each). */
const SIGNATURE_PAGES_MAX = 10;
const SIGNATURE_PAGE = 1000;
const TRANSACTIONS_IN_FLIGHT = 10;

interface Position {
  wallet: string | null;
  token: string | null;
}

function parsePosition(text: string): Position {
  const parsed = JSON.parse(text) as Partial<Position>;
  return { wallet: parsed.wallet ?? null, token: parsed.token ?? null };
}

export interface InboundInput {
  client: RpcClient;
  treasury: Address;
  treasuryAta: Address;
  usdcMint: Address;
}

export async function currentPosition(input: InboundInput): Promise<string> {
  const newest = async (address: Address) => {
    const [first] = await call(input.client, 'getSignaturesForAddress', input.client.rpc.getSignaturesForAddress(address, { limit: 1, commitment: 'finalized' }));
    return first ? String(first.signature) : null;
  };
  const [wallet, token] = await Promise.all([newest(input.treasury), newest(input.treasuryAta)]);
  return JSON.stringify({ wallet, token });
}

interface SignatureSeen {
  signature: string;
  slot: bigint;
  failed: boolean;
  address: 'wallet' | 'token';
}

/** Every finalized signature of `address` after `until`, oldest first; throws past SIGNATURE_PAGES_MAX pages. */
async function signaturesAfter(input: InboundInput, address: Address, until: string | null, which: 'wallet' | 'token'): Promise<SignatureSeen[]> {
  const found: SignatureSeen[] = [];
  let before: string | undefined;
  for (let page = 0; page < SIGNATURE_PAGES_MAX; page++) {
    const batch = await call(
      input.client,
      'getSignaturesForAddress',
      input.client.rpc.getSignaturesForAddress(address, {
        commitment: 'finalized',
        limit: SIGNATURE_PAGE,
        ...(until ? { until: until as Signature } : {}),
        ...(before ? { before: before as Signature } : {}),
      }),
    );
    for (const s of batch) found.push({ signature: String(s.signature), slot: BigInt(s.slot), failed: s.err !== null, address: which });
    if (batch.length < SIGNATURE_PAGE) return found.reverse();
    before = String(batch.at(-1)!.signature);
  }
  // The stored position is further back than the pages read: a page of the newest ones would move the position past
  // older transfers never booked. Refuse loudly (the scan logs it every period) rather than skip deposits.
  throw new ChainError(
    'rpc_error',
    'unknown',
    `more than ${SIGNATURE_PAGES_MAX * SIGNATURE_PAGE} finalized signatures of ${which} ${address} since the deposit scan's position: ` +
      'deposits are not booked until the scan can reach it',
  );
}

export async function readInboundTransfers(input: InboundInput, positionText: string): Promise<InboundScan> {
  const position = parsePosition(positionText);
  const [wallet, token] = await Promise.all([
    signaturesAfter(input, input.treasury, position.wallet, 'wallet'),
    signaturesAfter(input, input.treasuryAta, position.token, 'token'),
  ]);
  // One transaction may touch both addresses: read it once, at its first appearance in slot order.
  const merged = [...wallet, ...token].sort((a, b) => (a.slot === b.slot ? 0 : a.slot < b.slot ? -1 : 1));
  const unique = [...new Map(merged.map((s) => [s.signature, s])).values()];
  // A page never ends inside a slot: within one slot the two addresses' lists may interleave in any order, so a cut
  // there could move one address's position past a signature not read yet.
  let end = Math.min(unique.length, INBOUND_TRANSACTIONS_PER_SCAN);
  while (end < unique.length && unique[end]!.slot === unique[end - 1]!.slot) end++;
  const page = unique.slice(0, end);
  const next = { ...position };
  for (const seen of page) {
    // The position of each address moves to its newest signature read.
    for (const s of merged) if (s.signature === seen.signature) next[s.address] = s.signature;
  }
  // Read a few at a time, kept in order.
  const transfers: InboundTransfer[] = [];
  const landed = page.filter((seen) => !seen.failed);
  for (let i = 0; i < landed.length; i += TRANSACTIONS_IN_FLIGHT) {
    const batch = await Promise.all(landed.slice(i, i + TRANSACTIONS_IN_FLIGHT).map((seen) => transfersIn(input, seen.signature)));
    transfers.push(...batch.flat());
  }
  return { transfers, position: JSON.stringify(next), more: unique.length > page.length };
}

async function transfersIn(input: InboundInput, signature: string): Promise<InboundTransfer[]> {
  const tx = await call(
    input.client,
    'getTransaction',
    input.client.rpc.getTransaction(signature as Signature, { encoding: 'json', commitment: 'finalized', maxSupportedTransactionVersion: 0 }),
  );
  if (!tx?.meta || tx.meta.err !== null) return [];
  const keys: string[] = [
    ...tx.transaction.message.accountKeys.map(String),
    ...(tx.meta.loadedAddresses?.writable ?? []).map(String),
    ...(tx.meta.loadedAddresses?.readonly ?? []).map(String),
  ];
  const found: InboundTransfer[] = [];

  // USDC: the treasury's token account grew; the sender is the owner whose USDC fell most (the mint, for a mint).
  const usdc = (balances: typeof tx.meta.preTokenBalances) =>
    new Map((balances ?? []).filter((b) => String(b.mint) === input.usdcMint).map((b) => [b.accountIndex, { owner: String(b.owner ?? ''), amount: BigInt(b.uiTokenAmount.amount) }]));
  const preTokens = usdc(tx.meta.preTokenBalances);
  const postTokens = usdc(tx.meta.postTokenBalances);
  const ataIndex = keys.indexOf(input.treasuryAta);
  if (ataIndex >= 0) {
    const gained = (postTokens.get(ataIndex)?.amount ?? 0n) - (preTokens.get(ataIndex)?.amount ?? 0n);
    if (gained > 0n) {
      let from = input.usdcMint as string;
      let largest = 0n;
      for (const [index, pre] of preTokens) {
        const fell = pre.amount - (postTokens.get(index)?.amount ?? 0n);
        if (index !== ataIndex && fell > largest) {
          largest = fell;
          from = pre.owner;
        }
      }
      found.push({ txId: signature, index: 0, from, currency: 'USDC', amountUnits: gained });
    }
  }

  // SOL: the treasury wallet grew (as the fee payer it only ever pays); the sender is the account that lost most.
  const walletIndex = keys.indexOf(input.treasury);
  if (walletIndex > 0) {
    const pre = tx.meta.preBalances.map((v) => BigInt(v));
    const post = tx.meta.postBalances.map((v) => BigInt(v));
    const gained = post[walletIndex]! - pre[walletIndex]!;
    if (gained > 0n) {
      let from = keys[0]!;
      let largest = 0n;
      pre.forEach((value, index) => {
        const fell = value - post[index]!;
        if (index !== walletIndex && fell > largest) {
          largest = fell;
          from = keys[index]!;
        }
      });
      found.push({ txId: signature, index: 1, from, currency: 'native', amountUnits: gained });
    }
  }
  return found;
}
