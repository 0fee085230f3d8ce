// The chains the service pays out on (CHAINS, decision 159), as every view shows them. Nothing here names a chain:
// the list is GET /admin/treasury's (a row per configured chain, in CHAINS order), read once at sign-in and shared
// through the session. A chain's colour is its place in that list, so it is the same on every page and at every
// visit while CHAINS keeps its order; a chain no longer configured (the history of a removed one) is grey.
import { html } from './html.js';
import { api } from './api.js';
import { useSession } from './session.js';

/** The first chains' colours, picked to tell apart on white; after them, hues a golden angle apart. */
export const PALETTE = ['#4f46e5', '#0d9488', '#d97706', '#db2777', '#2563eb', '#65a30d', '#9333ea', '#dc2626', '#0891b2', '#a16207'];
const UNCONFIGURED = '#6b7280';
const GOLDEN_ANGLE_DEG = 137.508;

/** The configured chains' names, in CHAINS order; none when the list cannot be read (the views still show rows). */
export async function loadChains() {
  try {
    return (await api('/admin/treasury')).map((row) => row.chain);
  } catch {
    return [];
  }
}

/** The colour of `chain` among the configured `chains`. */
export function chainColor(chains, chain) {
  const index = chains.indexOf(chain);
  if (index < 0) return UNCONFIGURED;
  if (index < PALETTE.length) return PALETTE[index];
  return `hsl(${Math.round((index * GOLDEN_ANGLE_DEG) % 360)} 65% 40%)`;
}

/** A chain's name as people write it: `base` -> Base, `base_sepolia` -> Base Sepolia. */
export function chainLabel(chain) {
  if (!chain) return '—';
  return String(chain)
    .split('_')
    .map((word) => word.charAt(0).toUpperCase() + word.slice(1))
    .join(' ');
}

/** The configured chains, in CHAINS order. */
export function useChains() {
  return useSession().chains ?? [];
}

/** A chain's name in its colour. */
export function ChainName({ chain }) {
  const chains = useChains();
  return html`<span class="chain" style=${{ color: chainColor(chains, chain) }} title=${chain}>${chainLabel(chain)}</span>`;
}

/** One <option> per configured chain, the value its name. */
export function ChainOptions() {
  return useChains().map((chain) => html`<option value=${chain}>${chainLabel(chain)}</option>`);
}
