// Credits an address on the devnet chain, written straight into LiteSVM like the genesis: SOL on the address, tokens
// in its associated token accounts (created when missing, in their program's layout: mints.ts), with each mint's
// supply raised by the same amount so the token's books still add up. Used for a treasury whose key the devnet does
// not hold (a PKCS#11 token), and by the faucet of `stableroute devnet fund`.
import { isAddress, lamports, type Address } from '@solana/kit';
import { AccountState, findAssociatedTokenPda } from '@solana-program/token';
import type { LiteSVM } from 'litesvm';
import { DEVNET_TOKENS, type DevnetToken } from '../tokens.js';
import { amountOf, MINT_SUPPLY_OFFSET, tokenAccountBytes, withAmountAndState, type DevnetMint, type DevnetMints } from './mints.js';

const SYSTEM_PROGRAM_ADDRESS = '11111111111111111111111111111111' as Address;

export interface Funding {
  usdcMicros: bigint;
  lamports: bigint;
  /** USDT and PYUSD too (default none). */
  usdtMicros?: bigint;
  pyusdMicros?: bigint;
}

function fundingOf(funding: Funding): Record<DevnetToken, bigint> {
  return { usdc: funding.usdcMicros, usdt: funding.usdtMicros ?? 0n, pyusd: funding.pyusdMicros ?? 0n };
}

/** The owner's associated token account of `mint`. */
export async function ataOf(mint: DevnetMint, owner: Address): Promise<Address> {
  return (await findAssociatedTokenPda({ owner, mint: mint.address, tokenProgram: mint.programAddress }))[0];
}

export async function fundAddress(svm: LiteSVM, mints: DevnetMints, address: string, funding: Funding): Promise<void> {
  if (!isAddress(address)) throw new RangeError(`not a Solana address: ${address}`);
  const atas = Object.fromEntries(await Promise.all(DEVNET_TOKENS.map(async (token) => [token, await ataOf(mints[token], address)] as const)));
  creditAccounts(svm, mints, address, atas as Record<DevnetToken, Address>, funding);
}

/** fundAddress with the owner's token accounts already derived: synchronous, for an RPC handler's one step. */
export function creditAccounts(svm: LiteSVM, mints: DevnetMints, owner: Address, atas: Partial<Record<DevnetToken, Address>>, funding: Funding): void {
  const amounts = fundingOf(funding);
  if (funding.lamports < 0n || DEVNET_TOKENS.some((token) => amounts[token] < 0n)) throw new RangeError('funding amounts must be >= 0');
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
  for (const token of DEVNET_TOKENS) {
    if (amounts[token] === 0n) continue;
    const ata = atas[token];
    if (ata === undefined) throw new RangeError(`no ${token} account derived for ${owner}`);
    const mint = mints[token];
    const mintAccount = svm.getAccount(mint.address);
    if (!mintAccount.exists) throw new RangeError(`no mint at ${mint.address}`);
    // The supply in place: a Token-2022 mint's extensions follow it.
    const data = new Uint8Array(mintAccount.data);
    const view = new DataView(data.buffer);
    view.setBigUint64(MINT_SUPPLY_OFFSET, view.getBigUint64(MINT_SUPPLY_OFFSET, true) + amounts[token], true);
    svm.setAccount({ ...mintAccount, data });
    writeTokenAccount(svm, mint, owner, ata, (held) => held + amounts[token], AccountState.Initialized);
  }
}

/** Writes `owner`'s token account at `ata` (created when missing) with its amount changed by `amount`, in `state`. */
function writeTokenAccount(svm: LiteSVM, mint: DevnetMint, owner: Address, ata: Address, amount: (held: bigint) => bigint, state: AccountState): void {
  const existing = svm.getAccount(ata);
  const data = existing.exists
    ? withAmountAndState(existing.data, amount(amountOf(existing.data)), state)
    : tokenAccountBytes(mint, owner, amount(0n), state);
  svm.setAccount({
    address: ata,
    programAddress: mint.programAddress,
    executable: false,
    lamports: lamports(svm.minimumBalanceForRentExemption(BigInt(data.length))),
    space: BigInt(data.length),
    data,
  });
}

/**
 * Freezes an address's token account of `mint`, as the mint's freeze authority does on the real chain (Circle's
 * blacklist on Solana; Tether and Paxos hold one too): the account is created empty when missing, and every transfer
 * to or from it then fails (AccountFrozen).
 */
export async function freezeAddress(svm: LiteSVM, mint: DevnetMint, address: string): Promise<void> {
  if (!isAddress(address)) throw new RangeError(`not a Solana address: ${address}`);
  writeTokenAccount(svm, mint, address, await ataOf(mint, address), (held) => held, AccountState.Frozen);
}
