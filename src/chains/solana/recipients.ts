// The payouts a batch of requests can make: each request validated on its own (a refusal is that request's ChainError,
// never the batch's), then its recipient and token account read from the chain, for all of them in as few calls as
// the node allows.
import type { Address } from '@solana/kit';
import { findAssociatedTokenPda, TOKEN_PROGRAM_ADDRESS } from '@solana-program/token';
import { SOLANA_ACCOUNTS_PER_CALL_MAX } from '../../bounds.js';
import { isWellFormedSolanaAddress } from '../../domain/addresses.js';
import { ChainError, type TransferRequest } from '../port.js';
import { BUILD_COMMITMENT, call, type RpcClient } from './rpc.js';

const TOKEN_2022_PROGRAM_ADDRESS = 'TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb';
const U64_MAX = 2n ** 64n - 1n;

/** A request the chain can pay: where its USDC goes, and whether that token account must be created first. */
export interface Payout {
  request: TransferRequest;
  recipient: Address;
  recipientAta: Address;
  createAta: boolean;
}

/**
 * Checks that need no chain, one answer per request: its refusal, or null. The port promises a validated address,
 * but a bad one must never reach the chain.
 */
export function refusalsOf(requests: readonly TransferRequest[], treasury: Address): (ChainError | null)[] {
  return requests.map((r) => refusalOf(r, treasury));
}

function refusalOf(request: TransferRequest, treasury: Address): ChainError | null {
  const recipient = request.to;
  if (!isWellFormedSolanaAddress(recipient)) {
    return new ChainError('invalid_destination', 'rejected', 'not a Solana wallet address (or the System Program)', { details: recipient });
  }
  if (recipient === treasury) {
    // The token program accepts a transfer to the source itself and moves nothing: the ledger would disagree.
    return new ChainError('invalid_destination', 'rejected', 'the recipient is the treasury itself');
  }
  if (request.amountMicros <= 0n || request.amountMicros > U64_MAX) {
    return new ChainError('internal_error', 'rejected', 'transfer amount out of range', {
      details: request.amountMicros.toString(),
    });
  }
  return null;
}

/** One answer per request, in order: the requests `refusals` let through, read from the chain. */
export async function payoutsOf(
  client: RpcClient,
  usdcMint: Address,
  requests: readonly TransferRequest[],
  refusals: readonly (ChainError | null)[],
): Promise<(Payout | ChainError)[]> {
  const answers: (Payout | ChainError | null)[] = [...refusals];
  const valid = requests.flatMap((request, i) => (answers[i] === null ? [{ request, i, recipient: request.to as Address }] : []));
  const atas = await Promise.all(
    valid.map(async (v) => (await findAssociatedTokenPda({ owner: v.recipient, mint: usdcMint, tokenProgram: TOKEN_PROGRAM_ADDRESS }))[0]),
  );
  const accounts = await readAccounts(client, valid.flatMap((v, k) => [v.recipient, atas[k]!]));
  valid.forEach((v, k) => {
    // A wallet address is owned by the System program (or does not exist yet). A token account given as the
    // recipient would get a token account of its own that nobody can spend from: refuse it.
    const owner = accounts[2 * k]?.owner;
    answers[v.i] =
      owner === TOKEN_PROGRAM_ADDRESS || owner === TOKEN_2022_PROGRAM_ADDRESS
        ? new ChainError('invalid_destination', 'rejected', 'the recipient is a token account, not a wallet', { details: v.recipient })
        : { request: v.request, recipient: v.recipient, recipientAta: atas[k]!, createAta: !accounts[2 * k + 1] };
  });
  return answers as (Payout | ChainError)[];
}

/** Whether each account exists and who owns it (no data), SOLANA_ACCOUNTS_PER_CALL_MAX per call, all calls at once. */
async function readAccounts(client: RpcClient, addresses: readonly Address[]): Promise<({ owner: Address } | null)[]> {
  const calls: Promise<readonly ({ owner: Address } | null)[]>[] = [];
  for (let i = 0; i < addresses.length; i += SOLANA_ACCOUNTS_PER_CALL_MAX) {
    const chunk = addresses.slice(i, i + SOLANA_ACCOUNTS_PER_CALL_MAX);
    calls.push(
      call(
        client,
        'getMultipleAccounts',
        client.rpc.getMultipleAccounts(chunk, { encoding: 'base64', commitment: BUILD_COMMITMENT, dataSlice: { offset: 0, length: 0 } }),
      ).then((answer) => answer.value),
    );
  }
  return (await Promise.all(calls)).flat();
}
