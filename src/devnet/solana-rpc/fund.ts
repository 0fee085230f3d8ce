// Credits an address on the devnet chain, written straight into LiteSVM like the genesis: SOL on the address, USDC
// in its associated token account (created when missing), with the mint's supply raised by the same amount so the
// token's books still add up. Used for a treasury whose key the devnet does not hold (a PKCS#11 token).
import { isAddress, lamports, none, type Address } from '@solana/kit';
import {
  AccountState,
  findAssociatedTokenPda,
  getMintDecoder,
  getMintEncoder,
  getTokenDecoder,
  getTokenEncoder,
  TOKEN_PROGRAM_ADDRESS,
} from '@solana-program/token';
import type { LiteSVM } from 'litesvm';

const SYSTEM_PROGRAM_ADDRESS = '11111111111111111111111111111111' as Address;
const MINT_BYTES = 82;
const TOKEN_ACCOUNT_BYTES = 165;

export interface Funding {
  usdcMicros: bigint;
  lamports: bigint;
}

export async function fundAddress(svm: LiteSVM, mint: Address, address: string, funding: Funding): Promise<void> {
  if (!isAddress(address)) throw new RangeError(`not a Solana address: ${address}`);
  const [ata] = await findAssociatedTokenPda({ owner: address, mint, tokenProgram: TOKEN_PROGRAM_ADDRESS });
  creditAccounts(svm, mint, address, ata, funding);
}

/** fundAddress with the owner's associated token account already derived: synchronous, for an RPC handler's one step. */
export function creditAccounts(svm: LiteSVM, mint: Address, owner: Address, ata: Address, funding: Funding): void {
  if (funding.usdcMicros < 0n || funding.lamports < 0n) throw new RangeError('funding amounts must be >= 0');
  const wallet = svm.getAccount(owner);
  if (wallet.exists && wallet.programAddress !== SYSTEM_PROGRAM_ADDRESS) {
    throw new RangeError(`${owner} is not a wallet (owned by ${wallet.programAddress})`);
  }
  svm.setAccount({
    address: owner,
    programAddress: SYSTEM_PROGRAM_ADDRESS,
    executable: false,
    lamports: lamports((wallet.exists ? wallet.lamports : 0n) + funding.lamports),
    space: 0n,
    data: new Uint8Array(0),
  });
  if (funding.usdcMicros === 0n) return;

  const mintAccount = svm.getAccount(mint);
  if (!mintAccount.exists) throw new RangeError(`no mint at ${mint}`);
  const mintState = getMintDecoder().decode(mintAccount.data.subarray(0, MINT_BYTES));
  svm.setAccount({
    ...mintAccount,
    data: new Uint8Array(getMintEncoder().encode({ ...mintState, supply: mintState.supply + funding.usdcMicros })),
  });
  writeTokenAccount(svm, mint, owner, ata, (amount) => amount + funding.usdcMicros, AccountState.Initialized);
}

/** Writes `owner`'s token account at `ata` (created when missing) with its amount changed by `amount`, in `state`. */
function writeTokenAccount(svm: LiteSVM, mint: Address, owner: Address, ata: Address, amount: (held: bigint) => bigint, state: AccountState): void {
  const existing = svm.getAccount(ata);
  const held = existing.exists ? getTokenDecoder().decode(existing.data.subarray(0, TOKEN_ACCOUNT_BYTES)).amount : 0n;
  svm.setAccount({
    address: ata,
    programAddress: TOKEN_PROGRAM_ADDRESS,
    executable: false,
    lamports: lamports(svm.minimumBalanceForRentExemption(BigInt(TOKEN_ACCOUNT_BYTES))),
    space: BigInt(TOKEN_ACCOUNT_BYTES),
    data: new Uint8Array(
      getTokenEncoder().encode({
        mint,
        owner,
        amount: amount(held),
        delegate: none(),
        state,
        isNative: none(),
        delegatedAmount: 0n,
        closeAuthority: none(),
      }),
    ),
  });
}

/**
 * Freezes an address's USDC token account, as USDC's freeze authority does on the real mint (Circle's blacklist on
 * Solana): the account is created empty when missing, and every transfer to or from it then fails (AccountFrozen).
 */
export async function freezeAddress(svm: LiteSVM, mint: Address, address: string): Promise<void> {
  if (!isAddress(address)) throw new RangeError(`not a Solana address: ${address}`);
  const [ata] = await findAssociatedTokenPda({ owner: address, mint, tokenProgram: TOKEN_PROGRAM_ADDRESS });
  writeTokenAccount(svm, mint, address, ata, (held) => held, AccountState.Frozen);
}
