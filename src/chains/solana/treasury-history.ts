// The treasury's own transactions since the newest one the books hold as landed (decision 199), for the check after
// the database history changed. Every payout the books lost was sent after the books recorded that one as landed, so
// it landed later: walking the treasury's signatures back from the newest (commitment `confirmed`, a few pages at most)
// to the first landed one of the books' finds them all. Each transaction the treasury paid for is read once (base64:
// its bytes, which the books can store as an attempt, and its balances); transfers into the treasury, paid by someone
// else, are the deposit scanner's. A blockhash lives MAX_PROCESSING_AGE blocks: once the finalized height is that far
// past the hold's mark, nothing signed before the mark can land any more (`quiet`).
import {
  decompileTransactionMessage,
  getBase64Encoder,
  getCompiledTransactionMessageDecoder,
  getTransactionDecoder,
  getTransactionMessageComputeUnitLimit,
  getTransactionMessageComputeUnitPrice,
  getUtf8Decoder,
  type Address,
  type Signature,
} from '@solana/kit';
import { ASSOCIATED_TOKEN_PROGRAM_ADDRESS, getTransferCheckedInstructionDataDecoder, TOKEN_PROGRAM_ADDRESS } from '@solana-program/token';
import {
  SOLANA_BOOKS_CHECK_PAGES_MAX,
  SOLANA_BLOCKHASH_LIFETIME_BLOCKS,
  SOLANA_SCAN_TRANSACTIONS_IN_FLIGHT,
  SOLANA_SIGNATURE_PAGE_SIGNATURES,
} from '../../bounds.js';
import { ChainError, type BooksLanded, type TreasuryActivity, type TreasuryTransaction } from '../port.js';
import type { PayoutLayout } from './errors.js';
import { encodeMeta } from './meta.js';
import { call, type RpcClient } from './rpc.js';
import { MEMO_PROGRAM_ADDRESS } from './transfer.js';

const TRANSFER_CHECKED = 12;

export interface TreasuryHistoryInput {
  client: RpcClient;
  treasury: Address;
  usdcMint: Address;
}

export async function readTreasuryTransactions(input: TreasuryHistoryInput, books: BooksLanded): Promise<TreasuryActivity> {
  const { client } = input;
  const [height, finalized] = await Promise.all([
    call(client, 'getBlockHeight', client.rpc.getBlockHeight({ commitment: 'confirmed' })),
    call(client, 'getBlockHeight', client.rpc.getBlockHeight({ commitment: 'finalized' })),
  ]);
  const mark = books.mark ?? String(height);
  const { signatures, complete } = await signaturesSince(input, new Set(books.landed));
  const transactions: TreasuryTransaction[] = [];
  const oldestFirst = [...signatures].reverse();
  for (let i = 0; i < oldestFirst.length; i += SOLANA_SCAN_TRANSACTIONS_IN_FLIGHT) {
    const read = await Promise.all(oldestFirst.slice(i, i + SOLANA_SCAN_TRANSACTIONS_IN_FLIGHT).map((s) => treasuryTransaction(input, s, height)));
    transactions.push(...read.filter((t): t is TreasuryTransaction => t !== null));
  }
  return { transactions, complete, nonces: null, mark, quiet: finalized > BigInt(mark) + SOLANA_BLOCKHASH_LIFETIME_BLOCKS };
}

/** The treasury's signatures newer than the first of `landed` found, newest first; `complete` once one was found. */
async function signaturesSince(input: TreasuryHistoryInput, landed: ReadonlySet<string>): Promise<{ signatures: string[]; complete: boolean }> {
  const signatures: string[] = [];
  let before: string | undefined;
  for (let page = 0; page < SOLANA_BOOKS_CHECK_PAGES_MAX; page++) {
    const listed = await call(
      input.client,
      'getSignaturesForAddress',
      input.client.rpc.getSignaturesForAddress(input.treasury, {
        commitment: 'confirmed',
        limit: SOLANA_SIGNATURE_PAGE_SIGNATURES,
        ...(before ? { before: before as Signature } : {}),
      }),
    );
    for (const s of listed) {
      const signature = String(s.signature);
      if (landed.has(signature)) return { signatures, complete: true };
      signatures.push(signature);
    }
    // The whole history read: a treasury the books never saw land anything has nothing older to miss.
    if (listed.length < SOLANA_SIGNATURE_PAGE_SIGNATURES) return { signatures, complete: true };
    before = signatures.at(-1);
  }
  return { signatures, complete: false };
}

/** The transaction, when the treasury paid for it (its fee payer): what it paid, and its bytes as an attempt stores them. */
async function treasuryTransaction(input: TreasuryHistoryInput, signature: string, height: bigint): Promise<TreasuryTransaction | null> {
  const found = await call(
    input.client,
    'getTransaction',
    input.client.rpc.getTransaction(signature as Signature, { encoding: 'base64', commitment: 'confirmed', maxSupportedTransactionVersion: 0 }),
  );
  // Listed, so the node has it: one behind a balancer that does not (yet) must not let the check pass it by.
  if (!found) throw new ChainError('rpc_error', 'unknown', `the node listed ${signature} but does not return it`);
  const rawTx = String(found.transaction[0]);
  const wire = getTransactionDecoder().decode(getBase64Encoder().encode(rawTx));
  const compiled = getCompiledTransactionMessageDecoder().decode(wire.messageBytes);
  const keys = compiled.staticAccounts.map(String);
  if (keys[0] !== input.treasury) return null;
  const message = decompileTransactionMessage(compiled);
  // Ours are legacy or v0 messages (transfer.ts); anything else the treasury signed is reported without its bytes.
  const priced = message.version === 1 ? null : message;
  const owners = new Map((found.meta?.postTokenBalances ?? []).map((b) => [b.accountIndex, String(b.owner ?? '')]));
  const layout: PayoutLayout[] = [];
  const transfers: TreasuryTransaction['transfers'] = [];
  let memo: string | null = null;
  message.instructions.forEach((ix, index) => {
    const data = ix.data ?? new Uint8Array();
    if (ix.programAddress === MEMO_PROGRAM_ADDRESS) memo = getUtf8Decoder().decode(data);
    if (ix.programAddress !== TOKEN_PROGRAM_ADDRESS || data[0] !== TRANSFER_CHECKED) return;
    const [source, mint, destination] = (ix.accounts ?? []).map((a) => String(a.address));
    if (mint !== input.usdcMint || source === undefined || destination === undefined) return;
    const createAtaIndex = message.instructions.findIndex(
      (other) => other.programAddress === ASSOCIATED_TOKEN_PROGRAM_ADDRESS && String(other.accounts?.[1]?.address) === destination,
    );
    layout.push({ paymentIntentId: null, recipientAta: destination, createdAta: createAtaIndex >= 0, transferIndex: index, createAtaIndex: createAtaIndex >= 0 ? createAtaIndex : null });
    const owner = owners.get(keys.indexOf(destination)) ?? destination;
    transfers.push({ to: owner, amountMicros: getTransferCheckedInstructionDataDecoder().decode(data).amount, token: 'usdc' });
  });
  const lifetime = message.lifetimeConstraint as { blockhash?: string };
  return {
    txId: signature,
    nonce: null,
    failed: found.meta?.err !== null && found.meta?.err !== undefined,
    transfers,
    memo,
    signed:
      layout.length > 0 && typeof lifetime.blockhash === 'string' && priced !== null
        ? {
            txId: signature,
            rawTx,
            meta: encodeMeta({
              blockhash: lifetime.blockhash,
              // It landed by `height`: the status reads never need to wait for an expiry.
              lastValidBlockHeight: height,
              payouts: layout,
              computeUnitLimit: getTransactionMessageComputeUnitLimit(message) ?? 0,
              computeUnitPriceMicroLamports: getTransactionMessageComputeUnitPrice(priced) ?? 0n,
            }),
          }
        : null,
  };
}
