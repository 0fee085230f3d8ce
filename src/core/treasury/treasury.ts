// Treasury wallets: one per chain, created and funded through the ledger on first start, and checked on every start:
// a ledger belongs to one wallet (decision 15), so a process whose adapter pays from another wallet refuses to run.
import type { ChainAdapter, ChainAdapters } from '../../chains/port.js';
import { withTransaction, type Pool } from '../../db/pool.js';
import { insertDepositPosition } from '../../db/queries/deposits.js';
import { insertTreasury, insertTreasuryToken, lockTreasury, countOpenPayments, readTreasuryAddress, readTreasuryTokens } from '../../db/queries/treasuries.js';
import { currencyOf, DEFAULT_TOKEN, TOKENS, type Token } from '../../domain/token.js';
import { sameAddress } from '../../domain/addresses.js';
import type { Chain } from '../../domain/chain.js';
import { movements } from '../../ledger/movements.js';
import { hasNativeFunding, treasuryNativeBalances } from '../../ledger/native-balances.js';
import { holdingsOf, postMany, treasuryBalances } from '../../ledger/store.js';
import { OPEN_STATUSES } from '../../domain/payment-intent.js';
import { ConfigError, envName } from '../../config.js';
import { formatUsdc } from '../../money.js';
import { TREASURY_SNAPSHOT_TRIES_MAX } from '../../bounds.js';

/**
 * A chain taken out of CHAINS must leave no USDC on the books and no payment open (decision 160): otherwise start-up
 * stops, naming the chain and what it holds. Gas alone does not stop it (stableroute withdraws USDC only, so gas
 * would pin the chain for ever): the chains left with gas are answered, for the caller to warn about. A chain with
 * nothing left simply stops being paid out on; its history stays, and listing it again brings it back.
 */
export async function refuseRemovedChains(pool: Pool, configured: readonly Chain[]): Promise<{ chain: Chain; nativeUnits: bigint }[]> {
  const removed = (await treasuryBalances(pool)).filter((balance) => !configured.includes(balance.chain));
  const open = await countOpenPayments(pool, removed.map((balance) => balance.chain), OPEN_STATUSES);
  // The other tokens' holdings count too (issue 40): a chain still holding USDT cannot leave either.
  const others = await Promise.all(TOKENS.filter((token) => token !== DEFAULT_TOKEN).map(currencyOf).map(async (currency) => ({ currency, balances: await treasuryBalances(pool, currency) })));
  for (const balance of removed) {
    const usdc = holdingsOf(balance);
    const payments = open.get(balance.chain) ?? 0;
    const held = others.flatMap(({ currency, balances }) => {
      const row = balances.find((b) => b.chain === balance.chain);
      return row && holdingsOf(row) !== 0n ? [`${formatUsdc(holdingsOf(row))} ${currency}`] : [];
    });
    if (held.length > 0) {
      throw new ConfigError('CHAINS', `${balance.chain} is not listed (CHAINS=${configured.join(',')}), but this database still holds ${held.join(', ')} on it: list it again, or withdraw them first (treasury withdraw --token).`);
    }
    if (usdc === 0n && payments === 0) continue;
    throw new ConfigError(
      'CHAINS',
      `${balance.chain} is not listed (CHAINS=${configured.join(',')}), but this database still holds ${formatUsdc(usdc)} USDC ` +
        `and ${payments} open payment(s) on it. List it again, or withdraw its USDC and let its payments finish before removing it.`,
    );
  }
  return removed.filter((balance) => balance.nativeUnits !== 0n).map(({ chain, nativeUnits }) => ({ chain, nativeUnits }));
}

/** The configured adapter pays from another wallet than the one this database's ledger books. */
export class TreasuryMismatchError extends Error {
  override readonly name = 'TreasuryMismatchError';
  constructor(
    readonly chain: Chain,
    readonly ledgerAddress: string,
    readonly adapterAddress: string,
  ) {
    super(
      `the ${chain} treasury changed: this database's ledger belongs to ${ledgerAddress}, but the configured ` +
        `${chain} treasury key is ${adapterAddress}. A ledger belongs to one wallet, so stableroute will not start. ` +
        `For a new treasury (for instance after restarting \`stableroute devnet\`, whose chains start empty), use a ` +
        `fresh database: a new DATA_DIR, or an empty database in DATABASE_URL. To keep this ledger, configure the ` +
        `${chain} treasury key of ${ledgerAddress} again.`,
    );
  }
}

/**
 * Creates each chain's treasury row once. Only the process whose INSERT wins posts the opening balance: what the
 * wallet holds on chain (a simulated wallet opens with SIM_TREASURY_USDC), USDC and native currency alike, so the
 * books say how much gas is left on every adapter (decision 17). Throws TreasuryMismatchError when a chain's row names
 * another wallet than its adapter's.
 */
export async function ensureTreasuries(pool: Pool, adapters: ChainAdapters, at: Date, tokensOf: (chain: Chain) => readonly Token[] = () => [DEFAULT_TOKEN]): Promise<void> {
  for (const [chain, adapter] of Object.entries(adapters)) {
    const tokens = tokensOf(chain);
    const existing = await readTreasuryAddress(pool, chain);
    if (existing !== null) {
      checkTreasury(chain, existing, adapter);
      await bookNativeOpeningOnce(pool, adapter, at);
      await bookTokenOpeningsOnce(pool, adapter, tokens, at);
      continue;
    }
    // Asked before the transaction: no lock is held while the node answers.
    const { position, opening, openingNative } = await openingSnapshot(adapter, tokens);
    await withTransaction(pool, async (tx) => {
      const created = await insertTreasury(tx, { chain, address: adapter.treasuryAddress(), nativeCurrency: adapter.nativeCurrency, at });
      if (!created) return;
      // The deposit scanner books what arrives after the opening balance, never what it already holds (decision 122).
      await insertDepositPosition(tx, chain, position, at);
      for (const [k, token] of tokens.entries()) {
        await insertTreasuryToken(tx, chain, token, at);
        if (opening[k]! > 0n) await postMany(tx, [{ movement: movements.fundUsdc(chain, opening[k]!, currencyOf(token)), context: { at } }]);
      }
      if (openingNative > 0n) await postMany(tx, [{ movement: movements.fundNative(chain, adapter.nativeCurrency, openingNative), context: { at } }]);
    });
    // Another process may have won the INSERT with another key.
    checkTreasury(chain, (await readTreasuryAddress(pool, chain))!, adapter);
  }
}

/**
 * A treasury created before native currency was booked on rpc chains (decision 17) has fees booked against a
 * `treasury_native` that never received its opening balance, so its booked gas is negative. Once, the first time a
 * process starts with this version, the difference to what the wallet holds is booked as funding; from then on the
 * books follow the wallet (fees here, deposits by the inbound-transfer worker).
 */
async function bookNativeOpeningOnce(pool: Pool, adapter: ChainAdapter, at: Date): Promise<void> {
  if (await hasNativeFunding(pool, adapter.chain)) return;
  // Asked before the transaction: no lock held while the node answers. A node that does not answer does not stop
  // the start: the booking is tried again at the next one.
  let onChain: bigint;
  try {
    onChain = await adapter.treasuryNativeBalance();
  } catch {
    return;
  }
  await withTransaction(pool, async (tx) => {
    await lockTreasury(tx, adapter.chain);
    if (await hasNativeFunding(tx, adapter.chain)) return; // another process booked it meanwhile
    const booked = (await treasuryNativeBalances(tx)).find((b) => b.chain === adapter.chain)?.units ?? 0n;
    if (onChain > booked) await postMany(tx, [{ movement: movements.fundNative(adapter.chain, adapter.nativeCurrency, onChain - booked), context: { at } }]);
  });
}

/**
 * A token added to NAME_TOKENS after its treasury was created (decision 238): the books start holding it only while
 * the wallet holds none of it. A wallet that already holds some refuses the start: its balance includes deposits the
 * scanner has not reached yet (those within the confirmation depth, or behind a lagging scan), which the scanner would
 * book again after an opening taken from that balance. A node that does not answer does not stop the start: the row
 * is tried again at the next one.
 */
async function bookTokenOpeningsOnce(pool: Pool, adapter: ChainAdapter, tokens: readonly Token[], at: Date): Promise<void> {
  const held = await readTreasuryTokens(pool, adapter.chain);
  for (const token of tokens.filter((t) => !held.includes(t))) {
    let onChain: bigint;
    try {
      onChain = await adapter.treasuryTokenBalance(token);
    } catch {
      return;
    }
    if (onChain > 0n) {
      throw new ConfigError(
        `${envName(adapter.chain)}_TOKENS`,
        `${token} is listed for ${adapter.chain}, whose treasury already holds ${formatUsdc(onChain)} ${currencyOf(token)} that these books never held. ` +
          `A token joins an existing treasury while its wallet holds none of it (its recent deposits would otherwise be booked twice): ` +
          `move that ${currencyOf(token)} out, start with ${token} listed, then fund it.`,
      );
    }
    await withTransaction(pool, async (tx) => {
      await lockTreasury(tx, adapter.chain);
      await insertTreasuryToken(tx, adapter.chain, token, at);
    });
  }
}

/**
 * The opening balances and the deposit position they include: the position is read before and after the balances,
 * and a transfer landing in between shows as a moved position, so the reading is taken again. Equal positions mean
 * the balances hold exactly the transfers up to it: none is booked twice (in the opening and by the scanner) or never.
 */
async function openingSnapshot(adapter: ChainAdapter, tokens: readonly Token[]): Promise<{ position: string; opening: bigint[]; openingNative: bigint }> {
  for (let attempt = 1; ; attempt++) {
    const position = await adapter.inboundPosition();
    const opening = await Promise.all(tokens.map((token) => adapter.treasuryTokenBalance(token)));
    const openingNative = await adapter.treasuryNativeBalance();
    if (attempt >= TREASURY_SNAPSHOT_TRIES_MAX || (await adapter.inboundPosition()) === position) return { position, opening, openingNative };
  }
}

function checkTreasury(chain: Chain, stored: string, adapter: ChainAdapter): void {
  const live = adapter.treasuryAddress();
  if (!sameAddress(chain, stored, live)) throw new TreasuryMismatchError(chain, stored, live);
}
