// Transfers into the treasury, for the deposit scanner (decisions 122-124): the finalized signatures of the
// treasury wallet and of its USDC token account, read oldest first; each transaction's balance deltas say what came
// in (USDC: the token account's increase; SOL: the wallet's). Deltas, not instruction parsing: they are right
// whichever program moved the funds.
//
// getSignaturesForAddress lists newest first, so the oldest signatures after the position are reached by walking down
// from the newest, a page at a time. The walk is stored in the position (decision 124): per address, `after` (every
// signature up to it is read) and `marks`, signatures that cut what lies above `after` into windows small enough to
// list in one call, the last mark bounding the oldest window. A scan walks at most a few pages further down, or reads
// the oldest window; either way the position moves, and no scan holds more than one page.
import type { Address, Signature } from '@solana/kit';
import { ChainError, type InboundScan, type InboundTransfer } from '../port.js';
import { call, type RpcClient } from './rpc.js';

/** getSignaturesForAddress's largest page. */
const SIGNATURE_PAGE = 1000;
/** Pages listed per address per scan call, walking down a backlog. */
const SIGNATURE_PAGES_PER_SCAN = 10;
/** Signatures of one address in a window: what a scan lists once the walk down is done. */
const WINDOW_SIGNATURES = 100;
/** Signatures read per scan call (one getTransaction each, failed ones excepted): both addresses' windows. */
const TRANSACTIONS_PER_SCAN = 2 * WINDOW_SIGNATURES;
const TRANSACTIONS_IN_FLIGHT = 10;
/**
 * Marks kept per address. A longer walk drops its newest marks, found again by a later walk once the older windows
 * are read: the position stays a few kilobytes whatever the backlog.
 */
const MARKS_MAX = 100;

type Which = 'wallet' | 'token';
const ADDRESSES: readonly Which[] = ['wallet', 'token'];

interface Cursor {
  /** The newest signature read; null before the address's first. */
  after: string | null;
  /** Newest first: the last one is the exclusive upper end of the oldest window. */
  marks: string[];
}
type Position = Record<Which, Cursor>;

/** The stored text; `marks` is left out while no walk is under way, so an idle position reads as it always did. */
function formatPosition(position: Position): string {
  const marks = Object.fromEntries(ADDRESSES.filter((w) => position[w].marks.length > 0).map((w) => [w, position[w].marks]));
  return JSON.stringify({ wallet: position.wallet.after, token: position.token.after, ...(Object.keys(marks).length > 0 ? { marks } : {}) });
}

function parsePosition(text: string): Position {
  const parsed = JSON.parse(text) as { wallet?: string | null; token?: string | null; marks?: Partial<Record<Which, string[]>> };
  const cursor = (which: Which): Cursor => ({ after: parsed[which] ?? null, marks: [...(parsed.marks?.[which] ?? [])] });
  return { wallet: cursor('wallet'), token: cursor('token') };
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
  return formatPosition({ wallet: { after: wallet, marks: [] }, token: { after: token, marks: [] } });
}

interface SignatureSeen {
  signature: string;
  slot: bigint;
  failed: boolean;
}

/** Finalized signatures of `address` strictly between `until` and `before`, newest first, at most `limit`. */
async function listSignatures(input: InboundInput, address: Address, before: string | undefined, until: string | null, limit: number): Promise<SignatureSeen[]> {
  const batch = await call(
    input.client,
    'getSignaturesForAddress',
    input.client.rpc.getSignaturesForAddress(address, {
      commitment: 'finalized',
      limit,
      ...(until ? { until: until as Signature } : {}),
      ...(before ? { before: before as Signature } : {}),
    }),
  );
  return batch.map((s) => ({ signature: String(s.signature), slot: BigInt(s.slot), failed: s.err !== null }));
}

interface Window {
  /** Oldest first: the signatures right after `after`. Null while the walk down has not reached `after`. */
  seen: SignatureSeen[] | null;
  marks: string[];
}

/**
 * The oldest window of one address, walking down (at most SIGNATURE_PAGES_PER_SCAN pages) where the stored marks do
 * not reach it yet. A listing shorter than the limit is everything between `after` and its upper end; a full one may
 * not reach `after`, so one of its signatures becomes a mark and the next page starts right below it. A mark is the
 * first signature of its slot where it can be, so that windows end at slot boundaries (see pageEnd).
 */
async function oldestWindow(input: InboundInput, address: Address, cursor: Cursor): Promise<Window> {
  const marks = [...cursor.marks];
  const push = (signature: string) => {
    marks.push(signature);
    if (marks.length > MARKS_MAX) marks.shift();
  };
  for (let page = 0; page < SIGNATURE_PAGES_PER_SCAN; page++) {
    const listed = await listSignatures(input, address, marks.at(-1), cursor.after, SIGNATURE_PAGE);
    if (listed.length === SIGNATURE_PAGE) {
      // The window above the mark (the mark and what is newer) then holds fewer than a page.
      let mark = SIGNATURE_PAGE - 2;
      while (mark > 0 && !startsSlot(listed, mark)) mark--;
      push(listed[startsSlot(listed, mark) ? mark : SIGNATURE_PAGE - 2]!.signature);
      continue;
    }
    // Nothing below the last mark (or a node that does not know it): the window above it is next.
    if (listed.length === 0 && marks.length > 0) {
      marks.pop();
      continue;
    }
    // Cut the listing into windows of at most WINDOW_SIGNATURES from the oldest, so that later scans list
    // no more than they read. The mark above a window is the oldest signature of the window after it.
    const cuts: number[] = [];
    for (let rest = listed.length; rest > WINDOW_SIGNATURES; ) {
      const lowest = rest - WINDOW_SIGNATURES - 1;
      let mark = lowest;
      while (mark < rest - 2 && !startsSlot(listed, mark)) mark++;
      if (!startsSlot(listed, mark)) mark = lowest;
      cuts.push(mark);
      rest = mark + 1;
    }
    for (const cut of [...cuts].reverse()) push(listed[cut]!.signature);
    return { seen: listed.slice(cuts.length > 0 ? cuts[0]! + 1 : 0).reverse(), marks };
  }
  return { seen: null, marks };
}

/** Whether listed[i] (newest first) is the first signature of its slot, the one below it being of an older slot. */
function startsSlot(listed: readonly SignatureSeen[], i: number): boolean {
  return listed[i]!.slot > listed[i + 1]!.slot;
}

export async function readInboundTransfers(input: InboundInput, positionText: string): Promise<InboundScan> {
  const position = parsePosition(positionText);
  const addressOf: Record<Which, Address> = { wallet: input.treasury, token: input.treasuryAta };
  const [wallet, token] = await Promise.all(ADDRESSES.map((w) => oldestWindow(input, addressOf[w], position[w])));
  const windows: Record<Which, Window> = { wallet: wallet!, token: token! };
  const next: Position = { wallet: { ...position.wallet, marks: windows.wallet.marks }, token: { ...position.token, marks: windows.token.marks } };
  // One address still walking down: read nothing yet. A transaction touching both addresses (every payout) is then
  // read once, when both reach it, rather than once per address.
  if (windows.wallet.seen === null || windows.token.seen === null) return { transfers: [], position: formatPosition(next), more: true };
  const seen: Record<Which, SignatureSeen[]> = { wallet: windows.wallet.seen, token: windows.token.seen };

  // Slot order across both addresses, up to the newest slot of a window that does not reach the newest signature of
  // its address (the other address's later signatures wait for that address's next window) and to the bound.
  let limit: bigint | null = null;
  for (const w of ADDRESSES) {
    const newest = seen[w].at(-1);
    if (next[w].marks.length > 0 && newest && (limit === null || newest.slot < limit)) limit = newest.slot;
  }
  const merged = [...seen.wallet, ...seen.token].sort((a, b) => (a.slot === b.slot ? 0 : a.slot < b.slot ? -1 : 1));
  const candidates = [...new Map(merged.filter((s) => limit === null || s.slot <= limit).map((s) => [s.signature, s])).values()];
  const page = candidates.slice(0, pageEnd(candidates));
  const read = new Set(page.map((s) => s.signature));

  // Each address moves to the newest signature before the first one of its window not read: within one slot the two
  // lists need not follow the order the merge chose, and a position never passes a signature not read.
  let more = false;
  for (const w of ADDRESSES) {
    const unread = seen[w].findIndex((s) => !read.has(s.signature));
    const done = unread === -1 ? seen[w] : seen[w].slice(0, unread);
    if (done.length > 0) next[w].after = done.at(-1)!.signature;
    // A window below a mark leaves at least the mark to read; read whole, the window above the mark is next.
    const belowMark = next[w].marks.length > 0;
    if (unread === -1 && belowMark) next[w].marks.pop();
    more ||= unread !== -1 || belowMark;
  }

  // Read a few at a time, kept in order.
  const transfers: InboundTransfer[] = [];
  const landed = page.filter((s) => !s.failed);
  for (let i = 0; i < landed.length; i += TRANSACTIONS_IN_FLIGHT) {
    const batch = await Promise.all(landed.slice(i, i + TRANSACTIONS_IN_FLIGHT).map((s) => transfersIn(input, s.signature)));
    transfers.push(...batch.flat());
  }
  return { transfers, position: formatPosition(next), more };
}

/**
 * Where the page of `candidates` ends: at most TRANSACTIONS_PER_SCAN, and not inside a slot, unless that slot
 * alone fills the page. Within one slot the two addresses' lists need not agree on the order, so a cut there would
 * make the next scan read a transaction touching both addresses a second time (harmless, booked once, but wasted).
 */
function pageEnd(candidates: readonly SignatureSeen[]): number {
  const bound = Math.min(candidates.length, TRANSACTIONS_PER_SCAN);
  let end = bound;
  while (end > 0 && end < candidates.length && candidates[end - 1]!.slot === candidates[end]!.slot) end--;
  return end > 0 ? end : bound;
}

async function transfersIn(input: InboundInput, signature: string): Promise<InboundTransfer[]> {
  const tx = await call(
    input.client,
    'getTransaction',
    input.client.rpc.getTransaction(signature as Signature, { encoding: 'json', commitment: 'finalized', maxSupportedTransactionVersion: 0 }),
  );
  // Listed as finalized, so the node has it: a node behind a balancer that does not (yet) must not let the position
  // pass a deposit. The scan fails and runs again.
  if (!tx?.meta) throw new ChainError('rpc_error', 'unknown', `the node listed ${signature} as finalized but does not return it`);
  if (tx.meta.err !== null) return [];
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
