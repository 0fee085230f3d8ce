// Sanctions screening's pure part: what a denylist file says, and how a recipient is looked up in it. EVM addresses
// are hex, so the same address may be written in any case (EIP-55 checksum or not): they are kept and looked up
// lower-cased. Solana addresses are base58, where case is meaning: they match exactly.
import { familyOf, type Chain } from './chain.js';

/** The listed addresses, each with the `# source` comment it was listed under (null: none). */
export type Denylist = ReadonlyMap<string, string | null>;

/** What a screening found for one recipient. */
export type ScreeningVerdict =
  | { hit: false }
  /** `source`: the list's comment for the address, or the provider; never shown to a merchant. */
  | { hit: true; by: 'list' | 'provider'; source: string | null };

/** An EVM address as a list may write it: the `0x` prefix too in any case (`0X...` is the same address). */
const EVM_ADDRESS = /^0[xX][0-9a-fA-F]{40}$/;

/** How `address` is kept in a list: an EVM address lower-cased (its prefix too), anything else as written. */
function listKey(address: string): string {
  return EVM_ADDRESS.test(address) ? address.toLowerCase() : address;
}

/** How a recipient on `chain` is looked up: lower-cased on an EVM chain, exact on Solana. */
export function lookupKey(chain: Chain, address: string): string {
  return familyOf(chain) === 'evm' ? address.toLowerCase() : address;
}

/**
 * Parses a list in the format of the public lists of sanctioned digital-currency addresses: one address per line,
 * blank lines ignored, `#` starting a comment. A comment after an address is that address's source; a comment on a
 * line of its own is the source of the addresses under it that name none (a heading such as `# OFAC SDN 2026-11-01`).
 * Only the first word of a line is read, so `address<TAB>name` lines work too.
 */
export function parseDenylist(text: string): Denylist {
  const list = new Map<string, string | null>();
  let heading: string | null = null;
  for (const line of text.split(/\r?\n/)) {
    const hash = line.indexOf('#');
    const comment = hash === -1 ? null : line.slice(hash + 1).trim() || null;
    const address = (hash === -1 ? line : line.slice(0, hash)).trim().split(/\s+/)[0] ?? '';
    if (address === '') {
      if (hash !== -1) heading = comment;
      continue;
    }
    list.set(listKey(address), comment ?? heading);
  }
  return list;
}

/** The verdict of the list on each recipient: a map lookup each, nothing else. */
export function checkDenylist(list: Denylist, recipients: readonly { chain: Chain; address: string }[]): ScreeningVerdict[] {
  return recipients.map(({ chain, address }) => {
    const key = lookupKey(chain, address);
    return list.has(key) ? { hit: true, by: 'list', source: list.get(key) ?? null } : { hit: false };
  });
}

/**
 * Why a reload of the list must not replace the list in force, or null: a list that lists nothing, or one that drops
 * more than `maxDropPercent` of the addresses in force (a truncated or half-written file keeps a prefix of the
 * addresses). `inForce` is null at start-up, when there is nothing to compare with. Counted by address, not by size:
 * a list swapped for another of the same length drops everything.
 */
export function listReloadRefusal(inForce: Denylist | null, next: Denylist, maxDropPercent: number): string | null {
  if (next.size === 0) return 'it lists no address';
  if (inForce === null || inForce.size === 0) return null;
  let dropped = 0;
  for (const address of inForce.keys()) if (!next.has(address)) dropped++;
  if (dropped * 100 <= maxDropPercent * inForce.size) return null;
  return `it drops ${dropped} of the ${inForce.size} addresses in force, more than SCREENING_LIST_MAX_DROP_PERCENT (${maxDropPercent}%)`;
}
