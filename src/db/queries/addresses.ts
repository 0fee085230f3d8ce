// The merchant address book (merchant_addresses): recipients a merchant may pay when its allowlist is on.
import type { Chain } from '../../domain/chain.js';
import type { Queryable } from '../pool.js';

export interface AddressRow {
  merchant_id: string;
  chain: Chain;
  address: string;
  label: string | null;
  created_at: Date;
  usable_from: Date;
}

const COLUMNS = 'merchant_id, chain, address, label, created_at, usable_from';

export async function readAddress(db: Queryable, merchantId: string, chain: Chain, addressKey: string): Promise<AddressRow | null> {
  const { rows } = await db.query<AddressRow>(
    `SELECT ${COLUMNS} FROM merchant_addresses WHERE merchant_id = $1 AND chain = $2 AND address_key = $3`,
    [merchantId, chain, addressKey],
  );
  return rows[0] ?? null;
}

/** Adds the address unless it is listed already; returns the new row, or null when it was there. */
export async function insertAddress(
  db: Queryable,
  row: AddressRow & { address_key: string },
): Promise<AddressRow | null> {
  const { rows } = await db.query<AddressRow>(
    `INSERT INTO merchant_addresses (merchant_id, chain, address_key, address, label, created_at, usable_from)
     VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT DO NOTHING RETURNING ${COLUMNS}`,
    [row.merchant_id, row.chain, row.address_key, row.address, row.label, row.created_at, row.usable_from],
  );
  return rows[0] ?? null;
}

export async function deleteAddress(db: Queryable, merchantId: string, chain: Chain, addressKey: string): Promise<AddressRow | null> {
  const { rows } = await db.query<AddressRow>(
    `DELETE FROM merchant_addresses WHERE merchant_id = $1 AND chain = $2 AND address_key = $3 RETURNING ${COLUMNS}`,
    [merchantId, chain, addressKey],
  );
  return rows[0] ?? null;
}

export async function listAddresses(db: Queryable, merchantId: string, chain: Chain | null): Promise<AddressRow[]> {
  const { rows } = await db.query<AddressRow>(
    `SELECT ${COLUMNS} FROM merchant_addresses WHERE merchant_id = $1 AND ($2::text IS NULL OR chain = $2)
      ORDER BY chain, created_at, address_key`,
    [merchantId, chain],
  );
  return rows;
}
