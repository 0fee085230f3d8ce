// Builds one USDC payout: [create the recipient's token account if missing] + transferChecked + a memo naming the
// payment, paid by the treasury, with a bounded compute budget. Preparing reads the chain; signing is local. Nothing is
// sent here; the signature is the transaction id from now on.
import {
  appendTransactionMessageInstructions,
  createTransactionMessage,
  getBase64EncodedWireTransaction,
  getSignatureFromTransaction,
  pipe,
  setTransactionMessageComputeUnitLimit,
  setTransactionMessageComputeUnitPrice,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  signTransactionMessageWithSigners,
  type Address,
  type Instruction,
} from '@solana/kit';
import {
  ASSOCIATED_TOKEN_PROGRAM_ADDRESS,
  findAssociatedTokenPda,
  getCreateAssociatedTokenIdempotentInstruction,
  getTransferCheckedInstruction,
  TOKEN_PROGRAM_ADDRESS,
} from '@solana-program/token';
import { isWellFormedSolanaAddress } from '../../domain/addresses.js';
import { USDC_DECIMALS } from '../../money.js';
import { ChainError, type SignedTransfer, type TransferRequest } from '../port.js';
import { COMPUTE_UNITS_TRANSFER, COMPUTE_UNITS_TRANSFER_AND_CREATE_ACCOUNT } from './fees.js';
import type { SolanaKey } from './keys.js';
import { encodeMeta } from './meta.js';
import { call, type RpcClient } from './rpc.js';

const TOKEN_2022_PROGRAM_ADDRESS = 'TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb';
/** The SPL Memo program, on every cluster and in LiteSVM's programs (decision 39). */
export const MEMO_PROGRAM_ADDRESS = 'MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr' as Address;
const U64_MAX = 2n ** 64n - 1n;
// The commitment for everything a transfer is built from. Preflight uses the same one: a blockhash newer than the
// preflight bank would be refused as "not found".
export const BUILD_COMMITMENT = 'confirmed';

export interface TransferContext {
  client: RpcClient;
  key: SolanaKey;
  usdcMint: Address;
  treasuryAta: Address;
  computeUnitPrice(): Promise<bigint>;
}

export interface PreparedUsdcTransfer {
  /** The compute-unit price the transfer pays, in micro-lamports. */
  computeUnitPrice: bigint;
  /** Signs with the treasury key. Local: no RPC. */
  sign(): Promise<SignedTransfer>;
}

/** A memo with no signer accounts: the program only checks the text is UTF-8 and logs it. */
function memoInstruction(text: string): Instruction {
  return { programAddress: MEMO_PROGRAM_ADDRESS, data: new TextEncoder().encode(text) };
}

export async function prepareUsdcTransfer(ctx: TransferContext, request: TransferRequest): Promise<PreparedUsdcTransfer> {
  // 1. Validate: the port promises a validated address, but a bad one must never reach the chain.
  const recipient = request.to;
  if (!isWellFormedSolanaAddress(recipient)) {
    throw new ChainError('invalid_destination', 'rejected', 'not a Solana wallet address (or the System Program)', { details: recipient });
  }
  if (recipient === ctx.key.address) {
    // The token program accepts a transfer to the source itself and moves nothing: the ledger would disagree.
    throw new ChainError('invalid_destination', 'rejected', 'the recipient is the treasury itself');
  }
  if (request.amountMicros <= 0n || request.amountMicros > U64_MAX) {
    throw new ChainError('internal_error', 'rejected', 'transfer amount out of range', {
      details: request.amountMicros.toString(),
    });
  }
  const [recipientAta] = await findAssociatedTokenPda({
    owner: recipient,
    mint: ctx.usdcMint,
    tokenProgram: TOKEN_PROGRAM_ADDRESS,
  });

  // 2. Read the chain: who the recipient is, whether its token account exists, a recent blockhash, a fee price.
  const [accounts, latest, computeUnitPrice] = await Promise.all([
    call(
      ctx.client,
      'getMultipleAccounts',
      ctx.client.rpc.getMultipleAccounts([recipient, recipientAta], {
        encoding: 'base64',
        commitment: BUILD_COMMITMENT,
        dataSlice: { offset: 0, length: 0 },
      }),
    ),
    call(ctx.client, 'getLatestBlockhash', ctx.client.rpc.getLatestBlockhash({ commitment: BUILD_COMMITMENT })),
    ctx.computeUnitPrice(),
  ]);
  const [recipientAccount, recipientAtaAccount] = accounts.value;
  // A wallet address is owned by the System program (or does not exist yet). A token account given as the
  // recipient would get a token account of its own that nobody can spend from: refuse it.
  const recipientOwner = recipientAccount?.owner;
  if (recipientOwner === TOKEN_PROGRAM_ADDRESS || recipientOwner === TOKEN_2022_PROGRAM_ADDRESS) {
    throw new ChainError('invalid_destination', 'rejected', 'the recipient is a token account, not a wallet', {
      details: recipient,
    });
  }
  const createAta = !recipientAtaAccount;

  // 3. Build: the idempotent create makes a race with another payout to the same new recipient harmless.
  const instructions: Instruction[] = [];
  if (createAta) {
    instructions.push(
      getCreateAssociatedTokenIdempotentInstruction({
        payer: ctx.key.signer,
        ata: recipientAta,
        owner: recipient,
        mint: ctx.usdcMint,
      }),
    );
  }
  instructions.push(
    getTransferCheckedInstruction({
      source: ctx.treasuryAta,
      mint: ctx.usdcMint,
      destination: recipientAta,
      authority: ctx.key.signer,
      amount: request.amountMicros,
      decimals: USDC_DECIMALS,
    }),
  );
  // Two payouts alike in recipient, amount, blockhash and fee would otherwise be the same bytes, one signature: the
  // second could never be recorded (nor land). The payment's id makes each payment's transfer its own, while a re-sign
  // of the same payment on the same blockhash stays the same bytes, which the chain lands at most once.
  instructions.push(memoInstruction(request.paymentIntentId));
  const computeUnitLimit = createAta ? COMPUTE_UNITS_TRANSFER_AND_CREATE_ACCOUNT : COMPUTE_UNITS_TRANSFER;
  const base = pipe(
    createTransactionMessage({ version: 0 }),
    (m) => setTransactionMessageFeePayerSigner(ctx.key.signer, m),
    (m) => setTransactionMessageLifetimeUsingBlockhash(latest.value, m),
    (m) => appendTransactionMessageInstructions(instructions, m),
    (m) => setTransactionMessageComputeUnitLimit(computeUnitLimit, m),
  );
  const message = computeUnitPrice > 0n ? setTransactionMessageComputeUnitPrice(computeUnitPrice, base) : base;

  // 4. Sign, when the caller is ready to persist the result.
  const programs = message.instructions.map((ix) => ix.programAddress);
  const meta = encodeMeta({
    blockhash: latest.value.blockhash,
    lastValidBlockHeight: latest.value.lastValidBlockHeight,
    createdAta: createAta,
    recipientAta,
    transferIndex: programs.indexOf(TOKEN_PROGRAM_ADDRESS),
    createAtaIndex: createAta ? programs.indexOf(ASSOCIATED_TOKEN_PROGRAM_ADDRESS) : null,
    computeUnitLimit,
    computeUnitPriceMicroLamports: computeUnitPrice,
  });
  return {
    computeUnitPrice,
    async sign() {
      const transaction = await signTransactionMessageWithSigners(message);
      return { txId: getSignatureFromTransaction(transaction), rawTx: getBase64EncodedWireTransaction(transaction), meta };
    },
  };
}
