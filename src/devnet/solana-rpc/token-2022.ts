// PYUSD's mint as on Solana mainnet (2b1kV6DkPAnxd5ixfnxCpjxmKwqjjaYmCZfHsFu24GXo): a Token-2022 mint with the
// extensions Paxos gave it, built by the real Token-2022 program inside LiteSVM (real instructions, not bytes written
// by hand), so the devnet's accounts have exactly the program's layout: TransferFeeConfig (0 basis points, 0 maximum),
// MintCloseAuthority, PermanentDelegate, TransferHook (no program), ConfidentialTransferMint (no auditor, approval
// required) with the ConfidentialTransferFeeConfig the program requires beside a fee, MetadataPointer to the mint
// itself and its TokenMetadata. @solana-program/token covers the classic
// program's instructions, which Token-2022 shares (transferChecked, mintToChecked...); the extensions' initialisers
// are encoded here, from the program's instruction layout (spl-token-2022 instruction.rs and extension/*/instruction.rs).
import { createHash } from 'node:crypto';
import { getAddressEncoder, type Address, type Instruction } from '@solana/kit';
import { AccountRole } from '@solana/kit';

export const TOKEN_2022_PROGRAM_ADDRESS = 'TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb' as Address;

// The program's instruction numbers (TokenInstruction) and the extensions' own sub-instruction 0, "initialize".
const INITIALIZE_MINT_2 = 20;
const INITIALIZE_MINT_CLOSE_AUTHORITY = 25;
const TRANSFER_FEE_EXTENSION = 26;
const CONFIDENTIAL_TRANSFER_EXTENSION = 27;
const INITIALIZE_PERMANENT_DELEGATE = 35;
const TRANSFER_HOOK_EXTENSION = 36;
const CONFIDENTIAL_TRANSFER_FEE_EXTENSION = 37;
const METADATA_POINTER_EXTENSION = 39;
const INITIALIZE = 0;

// What each extension takes in the mint account (TLV: 2 bytes type + 2 bytes length + value), after the 165 bytes of
// an account's base and its 1-byte account type.
const BASE_WITH_TYPE_BYTES = 166;
const TLV_HEADER_BYTES = 4;
const EXTENSION_BYTES = {
  transferFeeConfig: 108, // 2 authorities, withheld amount, older and newer fee (epoch, maximum, basis points)
  mintCloseAuthority: 32,
  permanentDelegate: 32,
  transferHook: 64, // authority, program id
  confidentialTransferMint: 65, // authority, auto-approve flag, auditor's ElGamal key
  confidentialTransferFeeConfig: 129, // authority, withdraw authority's ElGamal key, harvest flag, withheld ciphertext
  metadataPointer: 64, // authority, metadata address
};

export interface Token2022MintSpec {
  mint: Address;
  decimals: number;
  /** Holds every authority of the mint, as Paxos' keys do on mainnet. */
  authority: Address;
  name: string;
  symbol: string;
  uri: string;
}

/** The mint account's size before its TokenMetadata, which the metadata instruction appends (reallocating). */
export function mintBytesBeforeMetadata(): number {
  return BASE_WITH_TYPE_BYTES + Object.values(EXTENSION_BYTES).reduce((sum, bytes) => sum + TLV_HEADER_BYTES + bytes, 0);
}

/** The mint account's final size, its TokenMetadata included (borsh: 2 keys, 3 strings, an empty list). */
export function mintBytesWithMetadata(spec: Pick<Token2022MintSpec, 'name' | 'symbol' | 'uri'>): number {
  const text = (s: string) => 4 + Buffer.byteLength(s, 'utf8');
  return mintBytesBeforeMetadata() + TLV_HEADER_BYTES + 32 + 32 + text(spec.name) + text(spec.symbol) + text(spec.uri) + 4;
}

/**
 * The instructions that initialise the mint account (created with mintBytesBeforeMetadata() bytes and the rent of
 * mintBytesWithMetadata()): every extension, the mint, then its metadata, signed by `authority` as mint authority.
 */
export function initializeMintInstructions(spec: Token2022MintSpec): Instruction[] {
  const key = (address: Address) => new Uint8Array(getAddressEncoder().encode(address));
  const some = (address: Address) => [1, ...key(address)];
  const none = new Uint8Array(32);
  const u16 = (n: number) => [n & 0xff, n >> 8];
  const u64 = (n: bigint) => [...new Uint8Array(new BigUint64Array([n]).buffer)];
  const onMint = (data: number[]): Instruction => ({
    programAddress: TOKEN_2022_PROGRAM_ADDRESS,
    accounts: [{ address: spec.mint, role: AccountRole.WRITABLE }],
    data: new Uint8Array(data),
  });
  const authority = [...key(spec.authority)];
  return [
    // Fees of 0 (0 basis points, 0 at most), which the fee authority may raise, as on mainnet.
    onMint([TRANSFER_FEE_EXTENSION, INITIALIZE, ...some(spec.authority), ...some(spec.authority), ...u16(0), ...u64(0n)]),
    onMint([INITIALIZE_MINT_CLOSE_AUTHORITY, ...some(spec.authority)]),
    onMint([INITIALIZE_PERMANENT_DELEGATE, ...authority]),
    onMint([TRANSFER_HOOK_EXTENSION, INITIALIZE, ...authority, ...none]),
    onMint([CONFIDENTIAL_TRANSFER_EXTENSION, INITIALIZE, ...authority, 0, ...none]),
    // The program requires it of a mint with both transfer fees and confidential transfers (mainnet PYUSD has it).
    onMint([CONFIDENTIAL_TRANSFER_FEE_EXTENSION, INITIALIZE, ...authority, ...none]),
    onMint([METADATA_POINTER_EXTENSION, INITIALIZE, ...authority, ...key(spec.mint)]),
    onMint([INITIALIZE_MINT_2, spec.decimals, ...authority, ...some(spec.authority)]),
    initializeMetadataInstruction(spec),
  ];
}

/** spl-token-metadata-interface's Initialize, which Token-2022 implements for a mint pointing at itself. */
function initializeMetadataInstruction(spec: Token2022MintSpec): Instruction {
  const discriminator = createHash('sha256').update('spl_token_metadata_interface:initialize_account').digest().subarray(0, 8);
  const text = (s: string) => {
    const bytes = Buffer.from(s, 'utf8');
    const length = Buffer.alloc(4);
    length.writeUInt32LE(bytes.length);
    return Buffer.concat([length, bytes]);
  };
  return {
    programAddress: TOKEN_2022_PROGRAM_ADDRESS,
    accounts: [
      { address: spec.mint, role: AccountRole.WRITABLE },
      { address: spec.authority, role: AccountRole.READONLY }, // update authority
      { address: spec.mint, role: AccountRole.READONLY },
      { address: spec.authority, role: AccountRole.READONLY_SIGNER }, // mint authority
    ],
    data: new Uint8Array(Buffer.concat([discriminator, text(spec.name), text(spec.symbol), text(spec.uri)])),
  };
}
