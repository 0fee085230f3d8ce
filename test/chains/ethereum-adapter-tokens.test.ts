// The Ethereum adapter pays every token of NAME_TOKENS (issue 40) on the devnet's real contracts: Tether's USDT, whose
// transfer returns nothing, and Paxos' PYUSD, each from its own contract; balances, deposits and the treasury's own
// transactions are read per token. No sleeps: blocks are mined on demand.
import { createPublicClient, erc20Abi, http, type Address } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEthereumAdapter } from '../../src/chains/ethereum/adapter.js';
import { ChainError, type ChainAdapter, type SignedTransfer, type TransferRequest } from '../../src/chains/port.js';
import { createEthereumKeySigner } from '../../src/chains/signers/key.js';
import { signAttempts } from '../../src/core/payments/outcomes/sign-attempts.js';
import { withTransaction } from '../../src/db/pool.js';
import { readIntent } from '../../src/db/queries/intents.js';
import { mineBlocks, startEthereumDevnet, type EthereumDevnet } from '../../src/devnet/ethereum.js';
import { blacklistEthereumAddress } from '../../src/devnet/ethereum-blacklist.js';
import { sendDevnetEthereumTransfer } from '../../src/devnet/ethereum-transfer.js';
import { createTestDatabase, seedMerchantAndQuote, type TestDatabase } from '../helpers/db.js';
import { clearance, prepareOne } from '../helpers/sign.js';

const CONFIRMATIONS = 2;
const MICROS = 1_000_000n;

let devnet: EthereumDevnet;
let db: TestDatabase;
let adapter: ChainAdapter;
let reader: ReturnType<typeof createPublicClient>;
let sequence = 0;

beforeAll(async () => {
  [devnet, db] = await Promise.all([startEthereumDevnet(), createTestDatabase()]);
  adapter = await createEthereumAdapter({
    rpcUrl: devnet.rpcUrl,
    usdcAddress: devnet.usdcAddress,
    tokens: { usdt: devnet.usdtAddress, pyusd: devnet.pyusdAddress },
    signer: createEthereumKeySigner(devnet.treasuryKey),
    chain: { name: 'ethereum', chainId: null, finality: 'confirmations', confirmations: CONFIRMATIONS, nativeCurrency: 'ETH', nativeUsdPrice: 3000, finalSeconds: 24, blockSeconds: 12 },
    rpcTimeoutSeconds: 5,
  });
  reader = createPublicClient({ transport: http(devnet.rpcUrl), cacheTime: 0 });
  await seedMerchantAndQuote(db, { merchantId: 'mer_tok', quoteId: 'quo_tok', chain: 'ethereum' });
});

afterAll(async () => {
  await adapter?.close?.();
  await devnet?.stop();
  await db?.drop();
});

/** Signs as the execution worker does, the payment's row holding its token. */
async function sign(request: TransferRequest): Promise<SignedTransfer> {
  const prepared = await prepareOne(adapter, request);
  return withTransaction(db.pool, async (tx) => {
    await tx.query(
      `INSERT INTO payment_intents (id, merchant_id, quote_id, idempotency_key, amount_micros, status, selected_chain, destination_address, created_at, updated_at, token)
       VALUES ($1, 'mer_tok', 'quo_tok', $1, $2, 'broadcasting', 'ethereum', $3, now(), now(), $4)`,
      [request.paymentIntentId, request.amountMicros, request.to, request.token ?? 'usdc'],
    );
    const intent = (await readIntent(tx, request.paymentIntentId))!;
    return (await signAttempts(tx, adapter, [{ intent, prepared }], new Date(), await clearance(tx, 'ethereum')))[0]!.signed;
  });
}

const balanceOf = (token: Address, holder: Address) => reader.readContract({ address: token, abi: erc20Abi, functionName: 'balanceOf', args: [holder] });

describe('the Ethereum adapter, per token', () => {
  it('pays USDT and PYUSD from their own contracts; balances, deposits and the treasury history name each token', async () => {
    const position = await adapter.inboundPosition();
    const treasury = adapter.treasuryAddress() as Address;
    const [usdtBefore, pyusdBefore, usdcBefore] = await Promise.all([adapter.treasuryTokenBalance('usdt'), adapter.treasuryTokenBalance('pyusd'), adapter.treasuryTokenBalance('usdc')]);
    const paid: { token: 'usdt' | 'pyusd'; to: Address; amount: bigint; contract: Address; signed?: SignedTransfer }[] = [
      { token: 'usdt', to: privateKeyToAccount(generatePrivateKey()).address, amount: 5n * MICROS, contract: devnet.usdtAddress },
      { token: 'pyusd', to: privateKeyToAccount(generatePrivateKey()).address, amount: 7n * MICROS, contract: devnet.pyusdAddress },
    ];
    for (const p of paid) {
      p.signed = await sign({ paymentIntentId: `pi_tok_${++sequence}`, to: p.to, amountMicros: p.amount, token: p.token });
      await adapter.broadcast(p.signed);
    }
    await mineBlocks(devnet.rpcUrl, CONFIRMATIONS + 1);
    expect((await adapter.getStatuses(paid.map((p) => p.signed!))).map((s) => s.state)).toEqual(['final', 'final']);
    for (const p of paid) {
      expect(await balanceOf(p.contract, p.to)).toBe(p.amount);
      expect((await reader.getTransaction({ hash: p.signed!.txId as `0x${string}` })).to?.toLowerCase()).toBe(p.contract.toLowerCase());
    }
    expect(await adapter.treasuryTokenBalance('usdt')).toBe(usdtBefore - 5n * MICROS);
    expect(await adapter.treasuryTokenBalance('pyusd')).toBe(pyusdBefore - 7n * MICROS);
    expect(await adapter.treasuryTokenBalance('usdc')).toBe(usdcBefore);

    // A USDT deposit is seen as USDT.
    await sendDevnetEthereumTransfer(devnet, { to: treasury, usdcMicros: 0n, wei: 0n, usdtMicros: 2n * MICROS });
    await mineBlocks(devnet.rpcUrl, CONFIRMATIONS + 1);
    let scan = await adapter.listInboundTransfers(position);
    const inbound = [...scan.transfers];
    while (scan.more) inbound.push(...(scan = await adapter.listInboundTransfers(scan.position)).transfers);
    expect(inbound.filter((t) => t.currency !== 'native').map((t) => [t.currency, t.amountUnits])).toEqual([['USDT', 2n * MICROS]]);

    // The treasury's own transactions name the token each moved.
    const activity = await adapter.treasuryTransactions({ landed: [], mark: null });
    const moved = activity.transactions.flatMap((tx) => tx.transfers).filter((t) => paid.some((p) => p.to.toLowerCase() === t.to.toLowerCase()));
    expect(moved.map((t) => [t.token, t.amountMicros])).toEqual([['usdt', 5n * MICROS], ['pyusd', 7n * MICROS]]);
  });

  it('a frozen PYUSD recipient is refused before signing (AddressFrozen(), a custom error), a USDT one is paid (Tether checks senders only)', async () => {
    const frozen = privateKeyToAccount(generatePrivateKey()).address;
    await blacklistEthereumAddress(devnet, frozen, 'pyusd');
    await blacklistEthereumAddress(devnet, frozen, 'usdt');
    const [pyusd, usdt] = await adapter.prepareTransfers([
      { paymentIntentId: `pi_tok_${++sequence}`, to: frozen, amountMicros: MICROS, token: 'pyusd' },
      { paymentIntentId: `pi_tok_${++sequence}`, to: frozen, amountMicros: MICROS, token: 'usdt' },
    ]);
    expect(pyusd).toBeInstanceOf(ChainError);
    expect(pyusd).toMatchObject({ reason: 'reverted', outcome: 'rejected' });
    expect(usdt).not.toBeInstanceOf(ChainError);
  });
});

