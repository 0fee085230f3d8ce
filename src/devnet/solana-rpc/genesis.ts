// The devnet's starting state, written into LiteSVM: 6-decimal USDC and USDT mints (classic SPL Token) whose whole
// (fixed) supply sits in the treasury's associated token accounts, a PYUSD mint (Token-2022, mainnet's extensions:
// token-2022.ts) built by the program itself and minted to the treasury's associated account, and the treasury's SOL
// for fees and rent.
import {
  appendTransactionMessageInstructions,
  compileTransaction,
  createNoopSigner,
  createTransactionMessage,
  lamports,
  none,
  pipe,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  type Address,
  type Instruction,
} from '@solana/kit';
import { getCreateAccountInstruction } from '@solana-program/system';
import {
  AccountState,
  findAssociatedTokenPda,
  getCreateAssociatedTokenIdempotentInstruction,
  getMintEncoder,
  getMintToCheckedInstruction,
  TOKEN_PROGRAM_ADDRESS,
} from '@solana-program/token';
import { FailedTransactionMetadata, type LiteSVM } from 'litesvm';
import { generateSolanaSecretKey } from '../../chains/solana/keys.js';
import { DEVNET_TOKEN_DECIMALS, type DevnetToken } from '../tokens.js';
import { classicAccountTemplate, tokenAccountBytes, type DevnetMint, type DevnetMints } from './mints.js';
import { initializeMintInstructions, mintBytesBeforeMetadata, mintBytesWithMetadata, TOKEN_2022_PROGRAM_ADDRESS } from './token-2022.js';

const SYSTEM_PROGRAM_ADDRESS = '11111111111111111111111111111111' as Address;
const MINT_BYTES = 82n;
/** SOL of the address that pays PYUSD's accounts at genesis (rent of the mint and of the treasury's account). */
const ISSUER_LAMPORTS = 1_000_000_000n;

export interface Genesis {
  usdcMint: Address;
  mints: DevnetMints;
  treasuryKey: string;
  treasuryAddress: Address;
  /** The treasury's USDC account. */
  treasuryAta: Address;
}

export interface GenesisOptions {
  treasuryUsdcMicros: bigint;
  /** Default 0. */
  treasuryUsdtMicros?: bigint;
  treasuryPyusdMicros?: bigint;
  treasuryLamports: bigint;
}

export async function writeGenesis(svm: LiteSVM, options: GenesisOptions): Promise<Genesis> {
  const treasury = generateSolanaSecretKey();
  const usdc = await writeClassicMint(svm, 'usdc', treasury.address, options.treasuryUsdcMicros);
  const usdt = await writeClassicMint(svm, 'usdt', treasury.address, options.treasuryUsdtMicros ?? 0n);
  const pyusd = await createPyusdMint(svm, treasury.address, options.treasuryPyusdMicros ?? 0n);
  if (options.treasuryLamports > 0n) {
    svm.setAccount({
      address: treasury.address,
      programAddress: SYSTEM_PROGRAM_ADDRESS,
      executable: false,
      lamports: lamports(options.treasuryLamports),
      space: 0n,
      data: new Uint8Array(0),
    });
  }
  return {
    usdcMint: usdc.mint.address,
    mints: { usdc: usdc.mint, usdt: usdt.mint, pyusd },
    treasuryKey: treasury.secretKey,
    treasuryAddress: treasury.address,
    treasuryAta: usdc.treasuryAta,
  };
}

/**
 * A classic mint at a fresh address nobody holds the key of, with no mint authority (fixed supply), its whole supply
 * in the treasury's associated token account: written, not minted, as USDC always was here.
 */
async function writeClassicMint(svm: LiteSVM, token: DevnetToken, treasury: Address, supply: bigint): Promise<{ mint: DevnetMint; treasuryAta: Address }> {
  const address = generateSolanaSecretKey().address;
  const mint: DevnetMint = {
    token,
    address,
    programAddress: TOKEN_PROGRAM_ADDRESS,
    decimals: DEVNET_TOKEN_DECIMALS,
    accountTemplate: classicAccountTemplate(address),
  };
  const [treasuryAta] = await findAssociatedTokenPda({ owner: treasury, mint: address, tokenProgram: TOKEN_PROGRAM_ADDRESS });
  svm.setAccount({
    address,
    programAddress: TOKEN_PROGRAM_ADDRESS,
    executable: false,
    lamports: lamports(svm.minimumBalanceForRentExemption(MINT_BYTES)),
    space: MINT_BYTES,
    data: new Uint8Array(
      getMintEncoder().encode({ mintAuthority: none(), supply, decimals: DEVNET_TOKEN_DECIMALS, isInitialized: true, freezeAuthority: none() }),
    ),
  });
  const data = tokenAccountBytes(mint, treasury, supply, AccountState.Initialized);
  svm.setAccount({
    address: treasuryAta,
    programAddress: TOKEN_PROGRAM_ADDRESS,
    executable: false,
    lamports: lamports(svm.minimumBalanceForRentExemption(BigInt(data.length))),
    space: BigInt(data.length),
    data,
  });
  return { mint, treasuryAta };
}

/**
 * PYUSD: one transaction through the real programs (System, Token-2022, Associated Token), processed without
 * signature verification: its issuer (every authority of the mint, a fresh address nobody holds the key of) creates
 * and initialises the mint, creates the treasury's associated account and mints the treasury's balance into it.
 */
async function createPyusdMint(svm: LiteSVM, treasury: Address, supply: bigint): Promise<DevnetMint> {
  const address = generateSolanaSecretKey().address;
  const issuer = generateSolanaSecretKey().address;
  const spec = { mint: address, decimals: DEVNET_TOKEN_DECIMALS, authority: issuer, name: 'PayPal USD (devnet)', symbol: 'PYUSD', uri: '' };
  svm.setAccount({ address: issuer, programAddress: SYSTEM_PROGRAM_ADDRESS, executable: false, lamports: lamports(ISSUER_LAMPORTS), space: 0n, data: new Uint8Array(0) });
  const [treasuryAta] = await findAssociatedTokenPda({ owner: treasury, mint: address, tokenProgram: TOKEN_2022_PROGRAM_ADDRESS });
  const payer = createNoopSigner(issuer);
  const instructions: Instruction[] = [
    getCreateAccountInstruction({
      payer,
      newAccount: createNoopSigner(address),
      lamports: svm.minimumBalanceForRentExemption(BigInt(mintBytesWithMetadata(spec))),
      space: mintBytesBeforeMetadata(),
      programAddress: TOKEN_2022_PROGRAM_ADDRESS,
    }),
    ...initializeMintInstructions(spec),
    getCreateAssociatedTokenIdempotentInstruction({ payer, ata: treasuryAta, owner: treasury, mint: address, tokenProgram: TOKEN_2022_PROGRAM_ADDRESS }),
  ];
  if (supply > 0n) {
    instructions.push(
      getMintToCheckedInstruction({ mint: address, token: treasuryAta, mintAuthority: payer, amount: supply, decimals: DEVNET_TOKEN_DECIMALS }, { programAddress: TOKEN_2022_PROGRAM_ADDRESS }),
    );
  }
  const message = pipe(
    createTransactionMessage({ version: 0 }),
    (m) => setTransactionMessageFeePayerSigner(payer, m),
    (m) => setTransactionMessageLifetimeUsingBlockhash({ blockhash: svm.latestBlockhash(), lastValidBlockHeight: 0n }, m),
    (m) => appendTransactionMessageInstructions(instructions, m),
  );
  svm.withSigverify(false);
  let result: ReturnType<LiteSVM['sendTransaction']>;
  try {
    result = svm.sendTransaction(compileTransaction(message));
  } finally {
    svm.withSigverify(true);
  }
  if (result instanceof FailedTransactionMetadata) {
    throw new Error(`the devnet could not create its PYUSD mint: ${String(result.err())}\n${result.meta().logs().join('\n')}`);
  }
  const account = svm.getAccount(treasuryAta);
  if (!account.exists) throw new Error('the devnet created no PYUSD account for its treasury');
  const mint: DevnetMint = { token: 'pyusd', address, programAddress: TOKEN_2022_PROGRAM_ADDRESS, decimals: DEVNET_TOKEN_DECIMALS, accountTemplate: new Uint8Array(0) };
  // The treasury's account as the program laid it out, emptied: the template of every PYUSD account the devnet writes.
  mint.accountTemplate = tokenAccountBytes({ ...mint, accountTemplate: account.data }, address, 0n, AccountState.Initialized);
  return mint;
}
