// Parameter readers and response pieces shared by the Solana RPC methods.
import { getBase58Encoder, isAddress, type Address } from '@solana/kit';
import { COMMITMENTS, type Commitment, type SolanaDevnetChain } from './chain.js';
import { invalidParams, optionalString, type Config, type Params, stringParam } from './json.js';

export type Handler = (params: Params) => unknown;  // a promise only for devnet-only methods (server.ts)
export type Methods = Record<string, Handler>;

export const API_VERSION = '2.2.0';
/** The largest transaction a validator accepts (one network packet). */
const PACKET_DATA_BYTES = 1232;

export function commitmentOf(config: Config, key = 'commitment', fallback: Commitment = 'finalized'): Commitment {
  const value = optionalString(config, key);
  if (value === undefined) return fallback;
  if (!(COMMITMENTS as readonly string[]).includes(value)) throw invalidParams(`unknown ${key} "${value}"`);
  return value as Commitment;
}

export function withContext(chain: SolanaDevnetChain, commitment: Commitment, value: unknown) {
  return { context: { apiVersion: API_VERSION, slot: chain.slotAt(commitment) }, value };
}

export function addressParam(params: Params, index: number, name: string): Address {
  const value = stringParam(params, index, name);
  if (!isAddress(value)) throw invalidParams(`${name} is not a valid address`);
  return value;
}

/** Bytes of an encoded transaction or message; base58 is the RPC's (deprecated) default. */
export function decodeWire(text: string, encoding: string | undefined): Uint8Array {
  let bytes: Uint8Array;
  if (encoding === 'base64') {
    if (!/^[A-Za-z0-9+/]*={0,2}$/.test(text)) throw invalidParams('invalid base64 encoding');
    bytes = Buffer.from(text, 'base64');
  } else if (encoding === undefined || encoding === 'base58') {
    try {
      bytes = new Uint8Array(getBase58Encoder().encode(text));
    } catch {
      throw invalidParams('invalid base58 encoding');
    }
  } else {
    throw invalidParams(`unsupported encoding "${encoding}"`);
  }
  if (bytes.length > PACKET_DATA_BYTES) {
    throw invalidParams(`transaction too large: ${bytes.length} bytes (max: ${PACKET_DATA_BYTES})`);
  }
  return bytes;
}
