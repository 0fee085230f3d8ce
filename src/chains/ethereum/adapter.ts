// The real Ethereum adapter: USDC `transfer` calls from the treasury, signed with EIP-1559 fees on nonces the
// orchestrator allocates (src/db/queries/nonces.ts), sent through any JSON-RPC endpoint. Signatures come from the
// treasury's signer (a key in memory or a PKCS#11 token, src/chains/signers); no key material passes through here.
// Every method that talks to the node finishes within RPC_TIMEOUT_SECONDS as a whole (rpc.ts): a hung node must not
// hold up a worker.
import type { Logger } from 'pino';
import { getAddress, isAddress, type Address, type Hex } from 'viem';
import { ConfigError, type ChainSettings } from '../../config.js';
import { NATIVE_DECIMALS } from '../../domain/chain-presets.js';
import { isWellFormedEthereumAddress } from '../../domain/addresses.js';
import { nativeToUsd } from '../../money.js';
import {
  ChainError,
  preparedEach,
  type ChainAdapter,
  type FeeEstimate,
  type HealthProbe,
  type BooksLanded,
  type InboundScan,
  type PreparedTransfer,
  type SignedTransfer,
  type TransferRequest,
  type TreasuryActivity,
  type TxStatus,
} from '../port.js';
import type { NetworkClaims } from '../networks.js';
import type { EthereumSigner } from '../signers/port.js';
import { signerAccount } from './account.js';
import { broadcastTransfer } from './broadcast.js';
import { decodeBatch, encodeBatch, estimateBatchGas, UNLIMITED_APPROVAL } from './batch.js';
import { decodeTransfer, encodeTransfer, readAllowance, readBalance, TYPICAL_TRANSFER_GAS } from './erc20.js';
import { toChainError } from './errors.js';
import { marketFees, readFeeMarket, replacementFees, type FeeMarket } from './fees.js';
import type { Finality } from './finality.js';
import { estimateTransferGas } from './gas.js';
import { readInboundTransfers } from './inbound.js';
import { readTreasuryTransactions } from './treasury-history.js';
import { estimateFeesBeyondGas, GAS_PRICE_ORACLE, hasGasPriceOracle } from './op-stack.js';
import { ETHEREUM_RPC_BATCH_REQUESTS_MAX, EVM_BATCH_TRANSFERS_MAX } from '../../bounds.js';
import { createEthereumRpc, timeoutMs, withDeadline } from './rpc.js';
import { readTransferStatus } from './status.js';
import { verifyUsdcToken } from './token.js';
import { currencyOf, DEFAULT_TOKEN, type Token } from '../../domain/token.js';
import { parseSignedTransfer, PLAIN_TRANSACTION_GAS, signTransaction } from './transaction.js';

export interface EthereumAdapterOptions {
  /** The EVM chain's settings: its name, chain id, finality rule, native currency and price (CHAINS, decision 159). */
  chain: Pick<ChainSettings, 'name' | 'chainId' | 'finality' | 'confirmations' | 'nativeCurrency' | 'nativeUsdPrice' | 'finalSeconds' | 'blockSeconds'> &
    Partial<Pick<ChainSettings, 'feeModel'>>;
  rpcUrl: string;
  usdcAddress: string;
  /** The other tokens of NAME_TOKENS and their contracts (issue 40); each a 6-decimal ERC-20, paid one transfer a transaction. */
  tokens?: Partial<Record<Exclude<Token, 'usdc'>, string>>;
  /** Signs for the treasury; closed with the adapter. */
  signer: EthereumSigner;
  /** Bounds each adapter call as a whole, however many requests it makes. */
  rpcTimeoutSeconds: number;
  /**
   * NAME_BATCH_CONTRACT: the batch-transfer contract the treasury approved without limit (decision 188); the payouts
   * prepared together then go out in one transaction each batch (decision 175). Absent: one transaction per payout.
   */
  batchContract?: string | null;
  /** The networks the process's other chains reach: this chain claims its own once its node answers (issue 35). */
  networks?: NetworkClaims;
  logger?: Logger;
}

const ETH_DECIMALS = NATIVE_DECIMALS.evm;

/**
 * Builds the adapter and checks, once, that the configured token has USDC's 6 decimals: a wrong token stops
 * start-up with a ConfigError naming ETHEREUM_USDC_ADDRESS. A node that cannot be asked does not stop start-up (the
 * health collector reports it); the check then runs again before the first transfer, which it refuses until it passes.
 */
export async function createEthereumAdapter(options: EthereumAdapterOptions): Promise<ChainAdapter> {
  const account = signerAccount(options.signer);
  const token = tokenAddress(options.usdcAddress);
  const settings = options.chain;
  // Every token this chain pays, USDC's contract first; a request names its token (absent: usdc).
  const tokenAddresses = new Map<Token, Address>([
    ['usdc', token],
    ...Object.entries(options.tokens ?? {}).map(([name, address]): [Token, Address] => [name as Token, tokenAddress(address)]),
  ]);
  const contractOf = (wanted: Token = DEFAULT_TOKEN): Address => {
    const address = tokenAddresses.get(wanted);
    if (address === undefined) throw new ChainError('internal_error', 'rejected', `${wanted} is not in ${settings.name.toUpperCase()}_TOKENS`, { details: wanted });
    return address;
  };
  const finalityRule: Finality = { rule: settings.finality, confirmations: settings.confirmations };
  if (!Number.isInteger(settings.confirmations) || settings.confirmations < 1) {
    throw new TypeError(`confirmations must be a positive integer, got ${settings.confirmations}`);
  }
  const rpc = createEthereumRpc(options.rpcUrl, options.rpcTimeoutSeconds, { chain: settings.name });
  const statusRpc = createEthereumRpc(options.rpcUrl, options.rpcTimeoutSeconds, { batch: true, chain: settings.name });
  const log = options.logger?.child({ chain: settings.name });
  const from = account.address;
  const batchContract = options.batchContract ? getAddress(options.batchContract) : null;
  const finalitySeconds = settings.finality === 'confirmations' ? settings.confirmations * settings.blockSeconds : settings.finalSeconds;
  const deadlineMs = timeoutMs(options.rpcTimeoutSeconds);
  const within = <T>(work: () => Promise<T>) => withDeadline(deadlineMs, work);
  /**
   * The market now, fees that replace whatever is pending on `tx`'s nonce (a replacement or a cancel), and what the
   * transaction that replaces it (`sent`) pays beyond gas.
   */
  const outbid = async (tx: ReturnType<typeof parseSignedTransfer>, what: string, sent: { to: Address; data: Hex; gas: bigint }) => {
    let market: FeeMarket;
    let beyond: bigint;
    try {
      [market, beyond] = await within(() => Promise.all([readFeeMarket(rpc), beyondGas(sent)]));
    } catch (error) {
      throw toChainError(error, { operation: `fee market for ${what}`, outcome: 'rejected' });
    }
    return { market, fees: replacementFees(tx, market), beyond };
  };
  const blockNumber = async (): Promise<string> => {
    try {
      return String(await within(() => rpc.getBlockNumber()));
    } catch (error) {
      throw toChainError(error, { operation: 'eth_blockNumber' });
    }
  };

  // Facts that never change under a running node: ask once, and again only after an ask that failed for an outage.
  // The node must be the chain the settings name (NAME_CHAIN_ID): signing for another chain id would either be
  // refused or, worse, be valid somewhere else. Nor may another configured chain reach the same network.
  const chainId = once(async () => {
    const id = await rpc.getChainId();
    if (settings.chainId !== null && id !== settings.chainId) {
      throw new ConfigError(`${settings.name.toUpperCase()}_CHAIN_ID`, `is ${settings.chainId}, but the node at ${settings.name.toUpperCase()}_RPC_URL is chain ${id}: refusing to sign for another chain`);
    }
    options.networks?.claim({ chain: settings.name, chainId: id, treasury: from, token });
    return id;
  }, (error) => !(error instanceof ConfigError));
  const tokenVerified = once(
    async () => {
      await Promise.all(
        [...tokenAddresses].map(([name, address]) =>
          name === 'usdc' ? verifyUsdcToken(rpc, address) : verifyUsdcToken(rpc, address, `${settings.name.toUpperCase()}_${currencyOf(name)}_ADDRESS`, currencyOf(name)),
        ),
      );
    },
    (error) => !(error instanceof ConfigError),
  );
  // A batch contract needs the treasury's unlimited approval (decision 188). Checked here to stop start-up; a node that
  // cannot be asked now, or an approval lowered later, leaves each batch's own check to pay one transaction each.
  const batchApproval = async () => {
    if (batchContract === null) return;
    const allowance = await readAllowance(rpc, token, from, batchContract);
    if (allowance < UNLIMITED_APPROVAL) {
      throw new ConfigError(`${settings.name.toUpperCase()}_BATCH_CONTRACT`, `the treasury ${from} approved ${batchContract} for ${allowance} micro-USDC, which is not unlimited: approve it for type(uint256).max (the contract pulls only from its caller), or unset the variable`);
    }
  };
  try {
    await within(() => Promise.all([chainId(), tokenVerified(), batchApproval()]));
  } catch (error) {
    if (error instanceof ConfigError) throw error;
    log?.warn({ err: summary(error) }, 'could not read the chain id, the USDC token decimals or the batch approval; checking again before the first transfer');
  }

  // The treasury paying itself, or the token contract, moves nothing that the ledger could settle.
  const ownAddresses = new Set([from.toLowerCase(), ...[...tokenAddresses.values()].map((address) => address.toLowerCase())]);
  const isValidRecipient = (candidate: string) => isWellFormedEthereumAddress(candidate) && !ownAddresses.has(candidate.toLowerCase());

  function transferData(request: TransferRequest): Hex {
    if (!isValidRecipient(request.to)) {
      const why = ownAddresses.has(request.to.toLowerCase())
        ? 'the recipient is the treasury or the USDC token contract itself'
        : 'not a valid Ethereum address';
      throw new ChainError('invalid_destination', 'rejected', why, { details: request.to });
    }
    if (request.amountMicros <= 0n) {
      throw new ChainError('internal_error', 'rejected', 'transfer amount must be positive', {
        details: String(request.amountMicros),
      });
    }
    return encodeTransfer(getAddress(request.to.toLowerCase()), request.amountMicros);
  }

  /** `gas` at `perGas` wei, plus what the chain charges beyond gas. */
  function feeEstimate(gas: bigint, perGas: bigint, beyond: bigint): FeeEstimate {
    const feeNative = gas * perGas + beyond;
    return { feeNative, feeUsd: nativeToUsd(feeNative, ETH_DECIMALS, settings.nativeUsdPrice) };
  }
  /** What the next block charges a gas unit: its base fee plus the tip. */
  const perGasOf = (market: FeeMarket) => market.baseFeePerGas + market.maxPriorityFeePerGas;

  // An OP-stack rollup charges an L1 data fee and an operator fee beyond gas (op-stack.ts, decision 189): its estimates
  // ask the GasPriceOracle. A node marked OP-stack that has no oracle (a devnet) is estimated by its gas, said once.
  const oracle = once(() => hasGasPriceOracle(rpc), () => true);
  let oracleMissingTold = false;
  async function beyondGas(tx: { to: Address; data: Hex; gas: bigint }): Promise<bigint> {
    if (settings.feeModel !== 'op-stack') return 0n;
    if (!(await oracle())) {
      if (!oracleMissingTold) log?.warn({ oracle: GAS_PRICE_ORACLE }, 'an OP-stack chain without the GasPriceOracle predeploy: estimating its fees by gas alone');
      oracleMissingTold = true;
      return 0n;
    }
    return estimateFeesBeyondGas(rpc, { chainId: await chainId(), ...tx });
  }
  /** The transfer routing prices: TYPICAL_TRANSFER_GAS, and on an OP-stack rollup the bytes of a USDC transfer. */
  const typicalTransfer = { to: token, data: encodeTransfer(from, 100_000_000n), gas: TYPICAL_TRANSFER_GAS };
  const typicalFee = async (): Promise<{ market: FeeMarket; fee: FeeEstimate }> => {
    const [market, beyond] = await Promise.all([readFeeMarket(rpc), beyondGas(typicalTransfer)]);
    return { market, fee: feeEstimate(TYPICAL_TRANSFER_GAS, perGasOf(market), beyond) };
  };

  /**
   * What a signature needs from the chain, read at once within one deadline: the token checked, the chain id, the fee
   * market, the pending nonce count, and the transaction's own reads (`ownReads`: its gas, and what else it needs).
   * The caller holds no lock while this runs; the nonce is allocated afterwards, under the nonce lock.
   */
  async function readForSigning<T>(operation: string, ownReads: () => Promise<T>) {
    try {
      const [, id, market, pendingCount, gas] = await within(() =>
        Promise.all([tokenVerified(), chainId(), readFeeMarket(rpc), rpc.getTransactionCount({ address: from, blockTag: 'pending' }), ownReads()]),
      );
      return { id, market, pendingCount, gas };
    } catch (error) {
      if (error instanceof ConfigError) throw new ChainError('internal_error', 'rejected', error.message, { cause: error });
      throw toChainError(error, { operation, outcome: 'rejected' });
    }
  }

  const transferGasInput = (request: TransferRequest, data: Hex) => ({
    rpc,
    from,
    token: contractOf(request.token),
    data,
    amountMicros: request.amountMicros,
    onFallback: (error: unknown) => log?.warn({ err: summary(error) }, 'gas estimate failed; using the fixed limit'),
  });

  /** One transfer, paid by a transaction of its own. */
  async function prepareTransfer(request: TransferRequest): Promise<PreparedTransfer> {
    // 1. Validate: an invalid request is our caller's bug or a bad destination, never worth an RPC call.
    const data = transferData(request);
    const contract = contractOf(request.token);
    // 2. Read the chain. The caller holds no lock while this runs; the nonce is allocated afterwards, under the
    //    nonce lock, from the pending count read here.
    const { id, market, pendingCount, gas: [gas, beyond] } = await readForSigning('preparing the transfer', () =>
      Promise.all([estimateTransferGas(transferGasInput(request, data)), beyondGas({ to: contract, data, gas: TYPICAL_TRANSFER_GAS })]),
    );
    const fees = marketFees(market);
    return {
      pendingNonce: pendingCount,
      feeEstimate: feeEstimate(TYPICAL_TRANSFER_GAS, perGasOf(market), beyond),
      // 3. Sign locally on the nonce the caller allocated. Nothing is sent.
      async sign(_db, nonce) {
        if (nonce === null) throw new ChainError('internal_error', 'rejected', 'an Ethereum transfer needs a nonce');
        const signed = await signTransaction(account, { chainId: id, nonce, to: contract, data, gas, ...fees });
        log?.debug({ txId: signed.txId, nonce, paymentIntentId: request.paymentIntentId }, 'ethereum transfer signed');
        return signed;
      },
    };
  }

  /**
   * The requests as the chain will pay them: with a batch contract, the valid ones in transactions of up to
   * EVM_BATCH_TRANSFERS_MAX (each one object at the places of the requests it pays); otherwise, or when a batch
   * cannot go (one payout, an approval that is not unlimited), one transaction each. A request the chain refuses is
   * answered with its own ChainError, and the others go out without it.
   */
  async function prepareTransfers(requests: readonly TransferRequest[]): Promise<(PreparedTransfer | ChainError)[]> {
    // The batch contract pulls USDC (decision 175); another token's payouts go one transaction each (issue 40).
    if (batchContract === null || requests.length < 2 || requests.some((r) => (r.token ?? DEFAULT_TOKEN) !== DEFAULT_TOKEN)) {
      return preparedEach(requests, prepareTransfer);
    }
    const answers: (PreparedTransfer | ChainError)[] = new Array(requests.length);
    const valid: number[] = [];
    requests.forEach((request, k) => {
      try {
        transferData(request);
        valid.push(k);
      } catch (error) {
        if (!(error instanceof ChainError)) throw error;
        answers[k] = error;
      }
    });
    for (let i = 0; i < valid.length; i += EVM_BATCH_TRANSFERS_MAX) {
      const ks = valid.slice(i, i + EVM_BATCH_TRANSFERS_MAX);
      const batched = await prepareBatch(batchContract, ks.map((k) => requests[k]!));
      ks.forEach((k, j) => (answers[k] = batched[j]!));
    }
    return answers;
  }

  /**
   * One transaction paying `requests` through the batch contract. When the batch would revert, each payout is tried
   * alone (the estimate of its own transfer), so that the payout the token refuses (a blacklisted recipient) fails
   * alone with its reason and the others go out together; a batch that still reverts goes out one by one.
   */
  async function prepareBatch(contract: Address, requests: readonly TransferRequest[], isolated = false): Promise<(PreparedTransfer | ChainError)[]> {
    if (requests.length < 2) return preparedEach(requests, prepareTransfer);
    const payouts = requests.map((r) => ({ to: getAddress(r.to.toLowerCase()), amountMicros: r.amountMicros }));
    const total = payouts.reduce((sum, p) => sum + p.amountMicros, 0n);
    const data = encodeBatch(token, payouts);
    const { id, market, pendingCount, gas: [allowance, gas, beyond] } = await readForSigning('preparing a batch', () =>
      Promise.all([
        readAllowance(rpc, token, from, contract),
        estimateBatchGas(rpc, from, contract, data),
        beyondGas({ to: contract, data, gas: TYPICAL_TRANSFER_GAS * BigInt(requests.length) }),
      ]),
    );
    // Not `allowance < total`: the batches signed and not yet mined will pull from it too (decision 188).
    if (allowance < UNLIMITED_APPROVAL) {
      log?.warn({ contract, allowance: allowance.toString(), total: total.toString() }, 'the treasury approval to the batch contract is not unlimited; paying one transaction each');
      return preparedEach(requests, prepareTransfer);
    }
    if (gas === 'reverted') {
      if (isolated) return preparedEach(requests, prepareTransfer);
      let alone: unknown[];
      try {
        alone = await within(() =>
          Promise.all(requests.map((request) => estimateTransferGas(transferGasInput(request, transferData(request))).then(() => null, (error: unknown) => error))),
        );
      } catch (error) {
        throw toChainError(error, { operation: 'finding the payout a batch reverts on', outcome: 'rejected' });
      }
      const answers: (PreparedTransfer | ChainError | null)[] = alone.map((error) => {
        if (error === null) return null;
        if (error instanceof ChainError) return error;
        throw error;
      });
      const rest = requests.flatMap((request, k) => (answers[k] === null ? [{ request, k }] : []));
      const prepared = await prepareBatch(contract, rest.map((r) => r.request), true);
      rest.forEach(({ k }, j) => (answers[k] = prepared[j]!));
      return answers as (PreparedTransfer | ChainError)[];
    }
    const fees = marketFees(market);
    const prepared: PreparedTransfer = {
      pendingNonce: pendingCount,
      feeEstimate: feeEstimate(gas, perGasOf(market), beyond),
      async sign(_db, nonce) {
        if (nonce === null) throw new ChainError('internal_error', 'rejected', 'an Ethereum transfer needs a nonce');
        const signed = await signTransaction(account, { chainId: id, nonce, to: contract, data, gas, ...fees });
        log?.debug({ txId: signed.txId, nonce, payouts: requests.length, paymentIntentIds: requests.map((r) => r.paymentIntentId) }, 'ethereum batch signed');
        return signed;
      },
    };
    return requests.map(() => prepared);
  }

  return {
    chain: settings.name,
    kind: 'rpc',
    nativeCurrency: settings.nativeCurrency,
    nativeDecimals: ETH_DECIMALS,
    typicalFinalitySeconds: finalitySeconds,

    treasuryAddress: () => from,

    isValidAddress: isValidRecipient,

    async estimateFee(): Promise<FeeEstimate> {
      try {
        return (await within(typicalFee)).fee;
      } catch (error) {
        throw toChainError(error, { operation: 'fee estimate' });
      }
    },

    prepareTransfers,

    async broadcast(signed: SignedTransfer): Promise<void> {
      try {
        await within(() => broadcastTransfer(rpc, signed, log));
      } catch (error) {
        // A timeout here leaves the outcome unknown: the bytes may have reached the node.
        throw toChainError(error, { operation: 'eth_sendRawTransaction' });
      }
    },

    async getStatuses(signed: readonly SignedTransfer[]): Promise<TxStatus[]> {
      // A page at a time, each page's reads in flight together, so the batching transport sends each step of them
      // (receipts, then block numbers, ...) as one JSON-RPC batch; each page within one deadline.
      const statuses: TxStatus[] = [];
      for (let i = 0; i < signed.length; i += ETHEREUM_RPC_BATCH_REQUESTS_MAX) {
        const page = signed.slice(i, i + ETHEREUM_RPC_BATCH_REQUESTS_MAX);
        try {
          const input = { rpc: statusRpc, from, finality: finalityRule, finalities: new Map() };
          statuses.push(...(await within(() => Promise.all(page.map((transfer) => readTransferStatus(input, transfer))))));
        } catch (error) {
          throw toChainError(error, { operation: 'transaction statuses' });
        }
      }
      return statuses;
    },

    head: blockNumber,

    async probe(): Promise<HealthProbe> {
      const started = performance.now();
      try {
        const { market, fee } = await within(async () => {
          await rpc.getBlockNumber();
          return typicalFee();
        });
        return {
          ok: true,
          latencyMs: performance.now() - started,
          fee,
          finalitySeconds,
          congestion: market.congestion,
        };
      } catch (error) {
        const { shortMessage } = toChainError(error, { operation: 'probe' });
        return { ok: false, latencyMs: performance.now() - started, error: shortMessage };
      }
    },

    async treasuryTokenBalance(wanted: Token): Promise<bigint> {
      const contract = contractOf(wanted);
      try {
        return await within(() => readBalance(rpc, contract, from));
      } catch (error) {
        throw toChainError(error, { operation: 'USDC balanceOf' });
      }
    },

    async treasuryNativeBalance(): Promise<bigint> {
      try {
        return await within(() => rpc.getBalance({ address: from }));
      } catch (error) {
        throw toChainError(error, { operation: 'eth_getBalance' });
      }
    },

    // The deposit scan's position is a block number too.
    inboundPosition: blockNumber,

    async listInboundTransfers(position: string): Promise<InboundScan> {
      try {
        return await within(() => readInboundTransfers({ rpc, tokens: [...tokenAddresses].map(([name, address]) => ({ address, currency: currencyOf(name) })), treasury: from, finality: finalityRule }, position));
      } catch (error) {
        throw toChainError(error, { operation: 'inbound transfers' });
      }
    },

    async treasuryTransactions(books: BooksLanded): Promise<TreasuryActivity> {
      try {
        return await within(() => readTreasuryTransactions({ rpc, tokens: [...tokenAddresses].map(([name, address]) => ({ address, token: name })), treasury: from }, books));
      } catch (error) {
        throw toChainError(error, { operation: 'treasury transactions' });
      }
    },

    // No nonce is allocated: the replacement reuses the stuck one.
    async prepareReplacement(requests: readonly TransferRequest[], stuck: SignedTransfer): Promise<PreparedTransfer> {
      // The replacement is rebuilt from the stuck bytes (same nonce, call data, gas), so it can only ever be the same
      // transfer or batch; the requests are checked against them rather than trusted.
      const tx = parseSignedTransfer(stuck);
      const via = getAddress(tx.to);
      const single = [...tokenAddresses.values()].includes(via) ? decodeTransfer(tx.data) : null;
      const paid = single ? [single] : via === batchContract ? decodeBatch(tx.data)?.payouts : undefined;
      const same =
        paid !== undefined &&
        paid.length === requests.length &&
        paid.every((p, i) => p.to.toLowerCase() === requests[i]!.to.toLowerCase() && p.amountMicros === requests[i]!.amountMicros);
      if (!same) {
        throw new ChainError('internal_error', 'rejected', 'the stuck transaction does not pay these transfers', {
          details: `stuck tx ${tx.hash} via ${tx.to} pays ${paid?.map((p) => `${p.amountMicros} to ${p.to}`).join(', ') ?? '?'}`,
        });
      }
      const { chainId: id, nonce, to, data, gas } = tx;
      const { market, fees, beyond } = await outbid(tx, 'a replacement', { to, data, gas });
      return {
        feeEstimate: feeEstimate(TYPICAL_TRANSFER_GAS, perGasOf(market), beyond),
        async sign() {
          const signed = await signTransaction(account, { chainId: id, nonce, to, data, gas, ...fees });
          log?.info({ txId: signed.txId, replaces: tx.hash, ...signed.meta }, 'ethereum transfer re-signed with higher fees');
          return signed;
        },
      };
    },

    // A cancel on chain (decision 63): zero ETH from the treasury to itself on the stuck nonce, with fees that replace
    // whatever is pending on it (the stuck transfer, or an earlier cancel, which is why `stuck` may be either). Once
    // it is final the nonce is used and the transfer can never land. Signed by the treasury's signer like a transfer.
    async prepareCancel(stuck: SignedTransfer): Promise<PreparedTransfer> {
      const tx = parseSignedTransfer(stuck);
      const gas = PLAIN_TRANSACTION_GAS;
      const { market, fees, beyond } = await outbid(tx, 'a cancel', { to: from, data: '0x', gas });
      const { chainId: id, nonce } = tx;
      // What the next block would charge: its base fee plus the tip, within the cap.
      const perGas = market.baseFeePerGas + fees.maxPriorityFeePerGas;
      return {
        feeEstimate: feeEstimate(gas, perGas < fees.maxFeePerGas ? perGas : fees.maxFeePerGas, beyond),
        async sign() {
          const signed = await signTransaction(account, { chainId: id, nonce, to: from, data: '0x', gas, ...fees });
          log?.info({ txId: signed.txId, cancels: tx.hash, ...signed.meta }, 'ethereum cancel signed on the stuck nonce');
          return signed;
        },
      };
    },

    close: () => options.signer.close(),
  };
}

/** A memoised ask whose failure is forgotten when `retriable` says so, so the next call asks again. */
function once<T>(ask: () => Promise<T>, retriable: (error: unknown) => boolean): () => Promise<T> {
  let pending: Promise<T> | undefined;
  return () =>
    (pending ??= ask().catch((error: unknown) => {
      if (retriable(error)) pending = undefined;
      throw error;
    }));
}

function tokenAddress(address: string): Address {
  if (!isAddress(address, { strict: true })) throw new TypeError(`usdcAddress is not an Ethereum address: ${address}`);
  return getAddress(address);
}

function summary(error: unknown): string {
  return error instanceof Error ? error.message.split('\n')[0]! : String(error);
}
