// The associated token account of (owner, mint, token program), derived synchronously (node:crypto's SHA-256 and
// kit's curve check), so that a standard RPC method needing one still answers in one synchronous step (server.ts).
// The same address @solana-program/token's findAssociatedTokenPda gives, without its promise.
import { createHash } from 'node:crypto';
import { getAddressDecoder, getAddressEncoder, isOffCurveAddress, type Address } from '@solana/kit';
import { ASSOCIATED_TOKEN_PROGRAM_ADDRESS } from '@solana-program/token';

const PDA_MARKER = Buffer.from('ProgramDerivedAddress');

export function associatedTokenAddress(owner: Address, mint: Address, tokenProgram: Address): Address {
  const encode = (address: Address) => Buffer.from(getAddressEncoder().encode(address));
  const seeds = [encode(owner), encode(tokenProgram), encode(mint)];
  const program = encode(ASSOCIATED_TOKEN_PROGRAM_ADDRESS);
  for (let bump = 255; bump >= 0; bump--) {
    const hash = createHash('sha256').update(Buffer.concat([...seeds, Buffer.from([bump]), program, PDA_MARKER])).digest();
    const address = getAddressDecoder().decode(hash);
    if (isOffCurveAddress(address)) return address;
  }
  throw new RangeError(`no associated token address for ${owner} and ${mint}`); // never, in practice
}
