// The devnet's three mints and the bytes of their token accounts. USDC and USDT are classic SPL Token mints (as on
// mainnet); PYUSD is a Token-2022 mint, whose token accounts carry the extensions its mint requires (ImmutableOwner,
// TransferFeeAmount, TransferHookAccount): the devnet copies the layout the program gave the treasury's account at
// genesis, so an account it writes (a faucet's, a frozen one) is the program's own shape. Every layout shares the
// classic 165 bytes first: mint, owner, amount, delegate, state...
import { none, type Address } from '@solana/kit';
import { AccountState, getTokenEncoder } from '@solana-program/token';
import type { DevnetToken } from '../tokens.js';

export const TOKEN_ACCOUNT_BYTES = 165;
const AMOUNT_OFFSET = 64;
const STATE_OFFSET = 108;
/** Where the supply sits in a mint, whichever program owns it. */
export const MINT_SUPPLY_OFFSET = 36;

export interface DevnetMint {
  token: DevnetToken;
  address: Address;
  /** The SPL Token or the Token-2022 program. */
  programAddress: Address;
  decimals: number;
  /** An empty token account of this mint as its program lays it out; owner, amount and state are written over it. */
  accountTemplate: Uint8Array;
}

export type DevnetMints = Readonly<Record<DevnetToken, DevnetMint>>;

/** A classic SPL token account's bytes (the template of a classic mint). */
export function classicAccountTemplate(mint: Address): Uint8Array {
  return new Uint8Array(
    getTokenEncoder().encode({
      mint,
      owner: mint, // written over
      amount: 0n,
      delegate: none(),
      state: AccountState.Initialized,
      isNative: none(),
      delegatedAmount: 0n,
      closeAuthority: none(),
    }),
  );
}

/** A token account of `mint` for `owner`, from the mint's template. */
export function tokenAccountBytes(mint: DevnetMint, owner: Address, amount: bigint, state: AccountState): Uint8Array {
  const data = new Uint8Array(mint.accountTemplate);
  const encoded = getTokenEncoder().encode({
    mint: mint.address,
    owner,
    amount,
    delegate: none(),
    state,
    isNative: none(),
    delegatedAmount: 0n,
    closeAuthority: none(),
  });
  data.set(new Uint8Array(encoded).subarray(0, TOKEN_ACCOUNT_BYTES));
  return data;
}

/** An existing token account's bytes with its amount and state changed, everything else (extensions) kept. */
export function withAmountAndState(data: Uint8Array, amount: bigint, state: AccountState): Uint8Array {
  const copy = new Uint8Array(data);
  new DataView(copy.buffer).setBigUint64(AMOUNT_OFFSET, amount, true);
  copy[STATE_OFFSET] = state;
  return copy;
}

export function amountOf(data: Uint8Array): bigint {
  return new DataView(data.buffer, data.byteOffset, data.byteLength).getBigUint64(AMOUNT_OFFSET, true);
}
