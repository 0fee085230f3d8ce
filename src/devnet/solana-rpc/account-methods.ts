// Account RPC methods. Reads see the latest state whatever the commitment (LiteSVM keeps no history); the context
// slot still follows the commitment asked for. Token accounts of both programs (SPL Token and Token-2022) answer alike.
import { getBase58Decoder, isAddress, type Address } from '@solana/kit';
import { getMintDecoder, TOKEN_PROGRAM_ADDRESS } from '@solana-program/token';
import { associatedTokenAddress } from './associated.js';
import type { SolanaDevnetChain } from './chain.js';
import { isTokenProgram, readTokenAccount, uiTokenAmount } from './balances.js';
import { addressParam, commitmentOf, withContext, type Methods } from './common.js';
import type { DevnetMints } from './mints.js';
import { configParam, integerParam, invalidParams, optionalString, stringArrayParam, type Config } from './json.js';

const RENT_EPOCH_EXEMPT = 2n ** 64n - 1n; // what the RPC reports for every rent-exempt account
const BASE58_DATA_MAX_BYTES = 128;
const MULTIPLE_ACCOUNTS_MAX = 100;
const MINT_BYTES = 82;

export function accountMethods(chain: SolanaDevnetChain, mints: DevnetMints): Methods {
  const accountJson = (address: Address, config: Config) => {
    const account = chain.svm.getAccount(address);
    if (!account.exists) return null;
    return {
      data: encodeData(chain, address, account.programAddress, account.data, config),
      executable: account.executable,
      lamports: account.lamports,
      owner: account.programAddress,
      rentEpoch: RENT_EPOCH_EXEMPT,
      space: BigInt(account.data.length),
    };
  };
  return {
    getAccountInfo: (params) => {
      const address = addressParam(params, 0, 'address');
      const config = configParam(params, 1);
      return withContext(chain, commitmentOf(config), accountJson(address, config));
    },
    getMultipleAccounts: (params) => {
      const addresses = stringArrayParam(params, 0, 'addresses', MULTIPLE_ACCOUNTS_MAX);
      const config = configParam(params, 1);
      const values = addresses.map((_, i) => accountJson(addressParam(addresses, i, 'address'), config));
      return withContext(chain, commitmentOf(config), values);
    },
    getBalance: (params) => {
      const address = addressParam(params, 0, 'address');
      return withContext(chain, commitmentOf(configParam(params, 1)), chain.svm.getBalance(address) ?? 0n);
    },
    getTokenAccountBalance: (params) => {
      const address = addressParam(params, 0, 'address');
      const commitment = commitmentOf(configParam(params, 1));
      const token = readTokenAccount(chain.svm, address);
      if (!token) {
        const exists = chain.svm.getAccount(address).exists;
        throw invalidParams(exists ? 'not a Token account' : 'could not find account');
      }
      return withContext(chain, commitment, uiTokenAmount(token.amount, token.decimals));
    },
    // The owner's token accounts of one mint, or of the devnet's mints of one program. The devnet has no index of
    // accounts by owner (LiteSVM keeps none): it answers with the owner's ASSOCIATED token accounts, the only kind it
    // creates; an account made by hand at another address is not listed.
    getTokenAccountsByOwner: (params) => {
      const owner = addressParam(params, 0, 'owner');
      const filter = configParam(params, 1);
      const config = configParam(params, 2);
      const candidates = tokenAccountsFilter(chain, mints, filter).map(({ mint, program }) => associatedTokenAddress(owner, mint, program));
      const value = candidates.flatMap((pubkey) => {
        const token = readTokenAccount(chain.svm, pubkey);
        if (!token || token.owner !== owner) return [];
        return [{ pubkey, account: accountJson(pubkey, config) }];
      });
      return withContext(chain, commitmentOf(config), value);
    },
    getMinimumBalanceForRentExemption: (params) =>
      chain.svm.minimumBalanceForRentExemption(integerParam(params, 0, 'data length')),
  };
}

/** The (mint, program) pairs a getTokenAccountsByOwner filter names: { mint } or { programId }, as the RPC takes. */
function tokenAccountsFilter(chain: SolanaDevnetChain, mints: DevnetMints, filter: Config): { mint: Address; program: Address }[] {
  const mint = optionalString(filter, 'mint');
  const programId = optionalString(filter, 'programId');
  if ((mint === undefined) === (programId === undefined)) throw invalidParams('Invalid param: the filter names a mint or a programId');
  if (mint !== undefined) {
    if (!isAddress(mint)) throw invalidParams('Invalid param: not a mint address');
    const account = chain.svm.getAccount(mint);
    if (!account.exists || !isTokenProgram(account.programAddress)) throw invalidParams('Invalid param: could not find mint');
    return [{ mint, program: account.programAddress }];
  }
  if (!isTokenProgram(programId!)) throw invalidParams(`Invalid param: unrecognized Token program id`);
  return Object.values(mints)
    .filter((m) => m.programAddress === programId)
    .map((m) => ({ mint: m.address, program: m.programAddress }));
}

function encodeData(chain: SolanaDevnetChain, address: Address, owner: string, data: Uint8Array, config: Config) {
  const encoding = optionalString(config, 'encoding') ?? 'base58';
  if (encoding === 'jsonParsed') {
    const parsed = parsedTokenData(chain, address, owner, data);
    if (parsed) return parsed;
    return [Buffer.from(data).toString('base64'), 'base64']; // the RPC falls back to base64 for unknown programs
  }
  const slice = sliceOf(config, data);
  if (encoding === 'base64') return [Buffer.from(slice).toString('base64'), 'base64'];
  if (encoding === 'base58') {
    if (slice.length > BASE58_DATA_MAX_BYTES) {
      throw invalidParams('Encoded binary (base 58) data should be less than 128 bytes, please use Base64 encoding.');
    }
    return [getBase58Decoder().decode(slice), 'base58'];
  }
  throw invalidParams(`unsupported encoding "${encoding}"`);
}

function sliceOf(config: Config, data: Uint8Array): Uint8Array {
  const slice = config.dataSlice;
  if (slice === undefined || slice === null) return data;
  const { offset, length } = slice as { offset?: unknown; length?: unknown };
  if (typeof offset !== 'number' || typeof length !== 'number' || offset < 0 || length < 0) {
    throw invalidParams('dataSlice needs a non-negative offset and length');
  }
  return data.subarray(offset, offset + length);
}

/** jsonParsed for the two SPL Token account kinds a payout involves: token accounts and mints. */
function parsedTokenData(chain: SolanaDevnetChain, address: Address, owner: string, data: Uint8Array) {
  if (!isTokenProgram(owner)) return null;
  const program = owner === TOKEN_PROGRAM_ADDRESS ? 'spl-token' : 'spl-token-2022';
  const token = readTokenAccount(chain.svm, address);
  if (token) {
    const info = {
      isNative: false,
      mint: token.mint,
      owner: token.owner,
      state: 'initialized',
      tokenAmount: uiTokenAmount(token.amount, token.decimals),
    };
    return { program, parsed: { type: 'account', info }, space: BigInt(data.length) };
  }
  if (data.length < MINT_BYTES) return null;
  const mint = getMintDecoder().decode(data.subarray(0, MINT_BYTES));
  if (!mint.isInitialized) return null;
  const info = {
    decimals: mint.decimals,
    freezeAuthority: mint.freezeAuthority.__option === 'Some' ? mint.freezeAuthority.value : null,
    isInitialized: true,
    mintAuthority: mint.mintAuthority.__option === 'Some' ? mint.mintAuthority.value : null,
    supply: mint.supply.toString(),
  };
  return { program, parsed: { type: 'mint', info }, space: BigInt(data.length) };
}
