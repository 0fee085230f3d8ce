// The devnet's starting state, written straight into LiteSVM: a 6-decimal USDC mint whose whole (fixed) supply sits
// in the treasury's associated token account, and the treasury's SOL for fees and rent.
import { lamports, none, type Address } from '@solana/kit';
import {
  AccountState,
  findAssociatedTokenPda,
  getMintEncoder,
  getTokenEncoder,
  TOKEN_PROGRAM_ADDRESS,
} from '@solana-program/token';
import type { LiteSVM } from 'litesvm';
import { generateSolanaSecretKey } from '../../chains/solana/keys.js';
import { USDC_DECIMALS } from '../../money.js';

const SYSTEM_PROGRAM_ADDRESS = '11111111111111111111111111111111' as Address;
const MINT_BYTES = 82n;
const TOKEN_ACCOUNT_BYTES = 165n;

export interface Genesis {
  usdcMint: Address;
  treasuryKey: string;
  treasuryAddress: Address;
  treasuryAta: Address;
}

export async function writeGenesis(
  svm: LiteSVM,
  options: { treasuryUsdcMicros: bigint; treasuryLamports: bigint },
): Promise<Genesis> {
  const treasury = generateSolanaSecretKey();
  // A fresh address nobody holds the key of: the mint account lives there, with no mint authority (fixed supply).
  const usdcMint = generateSolanaSecretKey().address;
  const [treasuryAta] = await findAssociatedTokenPda({
    owner: treasury.address,
    mint: usdcMint,
    tokenProgram: TOKEN_PROGRAM_ADDRESS,
  });
  svm.setAccount({
    address: usdcMint,
    programAddress: TOKEN_PROGRAM_ADDRESS,
    executable: false,
    lamports: lamports(svm.minimumBalanceForRentExemption(MINT_BYTES)),
    space: MINT_BYTES,
    data: new Uint8Array(
      getMintEncoder().encode({
        mintAuthority: none(),
        supply: options.treasuryUsdcMicros,
        decimals: USDC_DECIMALS,
        isInitialized: true,
        freezeAuthority: none(),
      }),
    ),
  });
  svm.setAccount({
    address: treasuryAta,
    programAddress: TOKEN_PROGRAM_ADDRESS,
    executable: false,
    lamports: lamports(svm.minimumBalanceForRentExemption(TOKEN_ACCOUNT_BYTES)),
    space: TOKEN_ACCOUNT_BYTES,
    data: new Uint8Array(
      getTokenEncoder().encode({
        mint: usdcMint,
        owner: treasury.address,
        amount: options.treasuryUsdcMicros,
        delegate: none(),
        state: AccountState.Initialized,
        isNative: none(),
        delegatedAmount: 0n,
        closeAuthority: none(),
      }),
    ),
  });
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
  return { usdcMint, treasuryKey: treasury.secretKey, treasuryAddress: treasury.address, treasuryAta };
}
