// The merchant address book: with the allowlist on, a merchant can pay only these recipients, each from the end of
// its cooling-off period (POLICY_ADDRESS_COOLING_OFF_SECONDS, fixed when the address is added; decision 9).
import { adapterOf } from '../../chains/port.js';
import { addSeconds } from '../../clock.js';
import type { Queryable } from '../../db/pool.js';
import { deleteAddress, insertAddress, listAddresses, readAddress, type AddressRow } from '../../db/queries/addresses.js';
import { readMerchant } from '../../db/queries/merchants.js';
import type { Chain } from '../../domain/chain.js';
import { AppError } from '../../domain/errors.js';
import { addressKey } from '../../domain/spending-policy.js';
import { audited, type AuditEntry } from '../operators/audit.js';
import type { AppContext } from '../context.js';

export type { AddressRow };

async function requireMerchant(db: Queryable, merchantId: string): Promise<void> {
  if (!(await readMerchant(db, merchantId))) throw new AppError('MERCHANT_NOT_FOUND', `merchant ${merchantId} was not found`);
}

/**
 * Adds a recipient, validated by the chain's adapter (the same rule as a quote's destination). Adding an address that
 * is listed already changes nothing and returns it (`created` false): re-adding must not restart, or skip, its
 * cooling-off period.
 */
export async function addAddress(
  ctx: Pick<AppContext, 'pool' | 'adapters' | 'clock' | 'config'>,
  merchantId: string,
  input: { chain: Chain; address: string; label?: string | null },
  audit: AuditEntry,
): Promise<{ entry: AddressRow; created: boolean }> {
  const address = input.address.trim();
  if (!adapterOf(ctx.adapters, input.chain).isValidAddress(address)) {
    throw new AppError('INVALID_DESTINATION', `${address} is not a valid ${input.chain} recipient (an address, not the treasury)`);
  }
  const now = ctx.clock.now();
  return audited(ctx, audit, now, async (tx) => {
    await requireMerchant(tx, merchantId);
    const key = addressKey(input.chain, address);
    const created = await insertAddress(tx, {
      merchant_id: merchantId,
      chain: input.chain,
      address_key: key,
      address,
      label: input.label?.trim() || null,
      created_at: now,
      usable_from: addSeconds(now, ctx.config.policy.addressCoolingOffSeconds),
    });
    if (created) return { entry: created, created: true };
    const existing = await readAddress(tx, merchantId, input.chain, key);
    if (!existing) throw new Error(`address ${key} of ${merchantId} vanished while it was being added`);
    return { entry: existing, created: false };
  });
}

/** Removes a recipient; the audit record commits with the removal. */
export async function removeAddress(
  ctx: Pick<AppContext, 'pool' | 'clock' | 'config'>,
  merchantId: string,
  chain: Chain,
  address: string,
  audit: AuditEntry,
): Promise<AddressRow> {
  return audited(ctx, audit, ctx.clock.now(), async (tx) => {
    await requireMerchant(tx, merchantId);
    const removed = await deleteAddress(tx, merchantId, chain, addressKey(chain, address));
    if (!removed) throw new AppError('ADDRESS_NOT_FOUND', `${address} is not in the ${chain} address book of ${merchantId}`);
    return removed;
  });
}

export async function addressBook(db: Queryable, merchantId: string, chain: Chain | null): Promise<AddressRow[]> {
  await requireMerchant(db, merchantId);
  return listAddresses(db, merchantId, chain);
}
