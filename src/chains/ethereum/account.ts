// The treasury as a viem account whose signatures come from an EthereumSigner (a key in memory or a PKCS#11 token):
// viem serialises the transaction, we hash it with keccak256, the signer signs the digest, viem serialises again
// with the signature. The account signs transactions only: the treasury has no reason to sign messages or typed
// data, and a signer that cannot is one less way to get something signed.
import { hexToBytes, keccak256, numberToHex, serializeTransaction, type LocalAccount } from 'viem';
import { toAccount } from 'viem/accounts';
import type { EthereumSigner } from '../signers/port.js';

export function signerAccount(signer: EthereumSigner): LocalAccount {
  const refuse = async (): Promise<never> => {
    throw new TypeError('the treasury account signs transactions only');
  };
  return toAccount({
    address: signer.address,
    async signTransaction(transaction, options) {
      const serializer = options?.serializer ?? serializeTransaction;
      const digest = hexToBytes(keccak256(await serializer(transaction)));
      const { r, s, yParity } = await signer.signDigest(digest);
      return serializer(transaction, { r: numberToHex(r, { size: 32 }), s: numberToHex(s, { size: 32 }), yParity });
    },
    signMessage: refuse,
    signTypedData: refuse,
  });
}
