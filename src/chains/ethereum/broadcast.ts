// eth_sendRawTransaction, made idempotent: sending bytes the node already has must be a success, so every
// "you already sent this nonce" answer is checked against the node's view of our own hash before it is an error.
import type { Logger } from 'pino';
import type { Hex } from 'viem';
import type { SignedTransfer } from '../port.js';
import { chainErrorOf, classifyEthereumError, toChainError, type EthereumErrorKind } from './errors.js';
import { nodeKnowsTransaction } from './lookups.js';
import type { EthereumRpc } from './rpc.js';
import { parseSignedTransfer } from './transaction.js';

// Answers a node gives when these very bytes already reached it: in its pool ("already known", "already
// imported"), mined ("nonce too low"), or a node comparing fees before hashes ("replacement underpriced").
const MAYBE_OURS: ReadonlySet<EthereumErrorKind> = new Set(['already_known', 'nonce_too_low', 'replacement_underpriced']);

export async function broadcastTransfer(rpc: EthereumRpc, signed: SignedTransfer, log?: Logger): Promise<void> {
  const { hash, nonce } = parseSignedTransfer(signed);
  try {
    const accepted = await rpc.sendRawTransaction({ serializedTransaction: signed.rawTx as Hex });
    log?.debug({ txId: hash, nonce }, 'ethereum transfer broadcast');
    if (accepted.toLowerCase() !== hash) log?.warn({ txId: hash, accepted }, 'node returned another hash for our bytes');
    return;
  } catch (error) {
    const kind = classifyEthereumError(error);
    if (MAYBE_OURS.has(kind)) {
      let known: boolean;
      try {
        known = await nodeKnowsTransaction(rpc, hash);
      } catch (lookupError) {
        throw toChainError(lookupError, { operation: 'eth_getTransactionByHash after a send error', outcome: 'unknown' });
      }
      if (known) {
        log?.debug({ txId: hash, nonce, kind }, 'ethereum transfer already on the node');
        return;
      }
    }
    throw chainErrorOf(kind, { operation: 'eth_sendRawTransaction' }, error);
  }
}
