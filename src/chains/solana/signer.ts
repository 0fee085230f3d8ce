// The treasury as a @solana/kit TransactionPartialSigner backed by a SolanaSigner (a key in memory or a PKCS#11
// token), in the SolanaKey shape transfer.ts builds payouts with.
import type { Address, SignatureBytes, TransactionPartialSigner } from '@solana/kit';
import type { SolanaSigner } from '../signers/port.js';
import type { SolanaKey } from './keys.js';

export function solanaKeyOf(signer: SolanaSigner): SolanaKey {
  const address = signer.address as Address;
  const partial: TransactionPartialSigner = Object.freeze({
    address,
    async signTransactions(transactions) {
      const signatures = [];
      // One after another: a token signs one message at a time anyway.
      for (const transaction of transactions) {
        const signature = (await signer.signMessage(new Uint8Array(transaction.messageBytes))) as SignatureBytes;
        signatures.push(Object.freeze({ [address]: signature }));
      }
      return signatures;
    },
  });
  return { address, signer: partial };
}
