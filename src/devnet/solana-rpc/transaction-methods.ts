// Transaction RPC methods: send, simulate, statuses, history, fee of a message.
import { getBase58Decoder, getCompiledTransactionMessageDecoder } from '@solana/kit';
import type { Commitment, CompiledMessage, SolanaDevnetChain, TransactionRecord } from './chain.js';
import { addressParam, commitmentOf, decodeWire, withContext, type Methods } from './common.js';
import {
  configParam,
  invalidParams,
  optionalBoolean,
  optionalInteger,
  optionalString,
  RPC_UNSUPPORTED_TRANSACTION_VERSION,
  RpcError,
  stringArrayParam,
  stringParam,
} from './json.js';

const STATUSES_MAX = 256;
const SIGNATURES_MAX = 1000;
const LAMPORTS_PER_SIGNATURE = 5000n;
const COMPUTE_BUDGET_PROGRAM = 'ComputeBudget111111111111111111111111111111';
const DEFAULT_COMPUTE_UNITS_PER_INSTRUCTION = 200_000n;
const MAX_COMPUTE_UNITS = 1_400_000n;
const RANK: Record<Commitment, number> = { processed: 0, confirmed: 1, finalized: 2 };

export function transactionMethods(chain: SolanaDevnetChain): Methods {
  return {
    sendTransaction: (params) => {
      const config = configParam(params, 1);
      const wire = decodeWire(stringParam(params, 0, 'transaction'), optionalString(config, 'encoding'));
      const skipPreflight = optionalBoolean(config, 'skipPreflight') ?? false;
      return chain.submit(wire, skipPreflight, commitmentOf(config, 'preflightCommitment'));
    },
    simulateTransaction: (params) => {
      const config = configParam(params, 1);
      const commitment = commitmentOf(config);
      const wire = decodeWire(stringParam(params, 0, 'transaction'), optionalString(config, 'encoding'));
      const decoded = chain.decode(wire);
      const sigVerify = optionalBoolean(config, 'sigVerify') ?? false;
      const replace = optionalBoolean(config, 'replaceRecentBlockhash') ?? false;
      if (sigVerify && replace) throw invalidParams('sigVerify may not be used with replaceRecentBlockhash');
      if (sigVerify) chain.verifySignatures(decoded);
      const result = chain.simulate(decoded, chain.slotAt(commitment), replace, sigVerify);
      return withContext(chain, commitment, {
        err: result.err,
        logs: result.logs,
        accounts: null,
        unitsConsumed: result.unitsConsumed,
        returnData: null,
        innerInstructions: null,
        loadedAccountsDataSize: null,
        replacementBlockhash: replace ? chain.latestBlockhash(commitment) : null,
      });
    },
    getSignatureStatuses: (params) => {
      const signatures = stringArrayParam(params, 0, 'signatures', STATUSES_MAX);
      configParam(params, 1); // searchTransactionHistory: the devnet keeps its whole (bounded) history anyway
      const values = signatures.map((signature) => {
        const record = chain.record(signature);
        if (!record) return null;
        const commitment = chain.commitmentOf(record);
        return {
          slot: record.slot,
          confirmations: commitment === 'finalized' ? null : chain.confirmationsOf(record),
          err: record.err,
          status: record.err === null ? { Ok: null } : { Err: record.err },
          confirmationStatus: commitment,
        };
      });
      return withContext(chain, 'processed', values);
    },
    getTransaction: (params) => {
      const signature = stringParam(params, 0, 'signature');
      // The legacy form [signature, "json"] names the encoding alone; real nodes still accept it.
      const config = typeof params[1] === 'string' ? { encoding: params[1] } : configParam(params, 1);
      const commitment = commitmentOf(config);
      if (commitment === 'processed') throw invalidParams('Method does not support commitment below `confirmed`');
      const encoding = optionalString(config, 'encoding') ?? 'json';
      if (encoding !== 'json' && encoding !== 'base64' && encoding !== 'base58') {
        throw invalidParams(`encoding "${encoding}" is not supported by this devnet (use json, base64 or base58)`);
      }
      const record = chain.record(signature);
      if (!record || RANK[chain.commitmentOf(record)] < RANK[commitment]) return null;
      const version = record.decoded.message.version;
      if (version === 0 && optionalInteger(config, 'maxSupportedTransactionVersion') === undefined) {
        throw new RpcError(
          RPC_UNSUPPORTED_TRANSACTION_VERSION,
          'Transaction version (0) is not supported by the requesting client. Please try the request again with the ' +
            'following configuration parameter: "maxSupportedTransactionVersion": 0',
        );
      }
      return transactionJson(record, encoding);
    },
    getSignaturesForAddress: (params) => {
      const address = addressParam(params, 0, 'address');
      const config = configParam(params, 1);
      const commitment = commitmentOf(config);
      if (commitment === 'processed') throw invalidParams('Method does not support commitment below `confirmed`');
      const limit = optionalInteger(config, 'limit') ?? SIGNATURES_MAX;
      if (limit < 1 || limit > SIGNATURES_MAX) throw invalidParams(`limit must be between 1 and ${SIGNATURES_MAX}`);
      const before = optionalString(config, 'before');
      const until = optionalString(config, 'until');
      return chain.signaturesFor(address, { limit, commitment, ...(before ? { before } : {}), ...(until ? { until } : {}) }).map((record) => ({
        signature: record.decoded.signature,
        slot: record.slot,
        err: record.err,
        memo: null,
        blockTime: record.blockTime,
        confirmationStatus: chain.commitmentOf(record),
      }));
    },
    getFeeForMessage: (params) => {
      const config = configParam(params, 1);
      const commitment = commitmentOf(config);
      const bytes = decodeWire(stringParam(params, 0, 'message'), 'base64');
      let message;
      try {
        message = getCompiledTransactionMessageDecoder().decode(bytes);
      } catch {
        throw invalidParams('failed to deserialize the message');
      }
      if (message.version !== 'legacy' && message.version !== 0) {
        const text = `Message version (${message.version}) is not supported`;
        throw new RpcError(RPC_UNSUPPORTED_TRANSACTION_VERSION, text);
      }
      if (!chain.isBlockhashValid(message.lifetimeToken, chain.slotAt(commitment))) {
        return withContext(chain, commitment, null);
      }
      return withContext(chain, commitment, messageFee(message));
    },
  };
}

function transactionJson(record: TransactionRecord, encoding: 'json' | 'base64' | 'base58') {
  const { decoded } = record;
  const message = decoded.message;
  const base58 = getBase58Decoder();
  const transaction =
    encoding === 'base64'
      ? [Buffer.from(decoded.wire).toString('base64'), 'base64']
      : encoding === 'base58'
        ? [base58.decode(decoded.wire), 'base58']
        : {
            signatures: decoded.signatures,
            message: {
              accountKeys: message.staticAccounts,
              header: {
                numRequiredSignatures: message.header.numSignerAccounts,
                numReadonlySignedAccounts: message.header.numReadonlySignerAccounts,
                numReadonlyUnsignedAccounts: message.header.numReadonlyNonSignerAccounts,
              },
              recentBlockhash: message.lifetimeToken,
              instructions: message.instructions.map((ix) => ({
                programIdIndex: ix.programAddressIndex,
                accounts: ix.accountIndices ?? [],
                data: base58.decode(ix.data ?? new Uint8Array(0)),
                stackHeight: null,
              })),
              ...(message.version === 0 ? { addressTableLookups: [] } : {}),
            },
          };
  return {
    slot: record.slot,
    blockTime: record.blockTime,
    version: message.version,
    transaction,
    meta: {
      err: record.err,
      status: record.err === null ? { Ok: null } : { Err: record.err },
      fee: record.fee,
      preBalances: record.pre.lamports,
      postBalances: record.post.lamports,
      innerInstructions: record.innerInstructions,
      logMessages: record.logs,
      preTokenBalances: record.pre.tokens,
      postTokenBalances: record.post.tokens,
      rewards: [],
      loadedAddresses: { writable: [], readonly: [] },
      computeUnitsConsumed: record.computeUnitsConsumed,
    },
  };
}

/** 5000 lamports per signature, plus compute-unit price x limit from the Compute Budget instructions. */
function messageFee(message: CompiledMessage): bigint {
  let price = 0n;
  let limit: bigint | undefined;
  let otherInstructions = 0n;
  for (const ix of message.instructions) {
    const data = ix.data ?? new Uint8Array(0);
    if (message.staticAccounts[ix.programAddressIndex] !== COMPUTE_BUDGET_PROGRAM) {
      otherInstructions += 1n;
      continue;
    }
    const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
    if (data[0] === 2 && data.length >= 5) limit = BigInt(view.getUint32(1, true));
    if (data[0] === 3 && data.length >= 9) price = view.getBigUint64(1, true);
  }
  const units = limit ?? otherInstructions * DEFAULT_COMPUTE_UNITS_PER_INSTRUCTION;
  const cappedUnits = units > MAX_COMPUTE_UNITS ? MAX_COMPUTE_UNITS : units;
  const priority = (price * cappedUnits + 999_999n) / 1_000_000n;
  return LAMPORTS_PER_SIGNATURE * BigInt(message.header.numSignerAccounts) + priority;
}
