// POST /admin/chain-health's body: the spec's fields and rules as written, each metric bounded to what routing can
// score (src/routing/snapshot-bounds.ts, decision 26). Anything else is 400 INVALID_CHAIN_HEALTH and stores nothing.
import { AVG_CONFIRMATION_SECONDS_MAX, ESTIMATED_FEE_USD_MAX, RPC_ERROR_RATE_MAX } from '../../routing/snapshot-bounds.js';
import { chainSchema } from './common.js';

export const chainHealthBody = {
  type: 'object',
  required: ['chain', 'health_status'],
  properties: {
    chain: chainSchema,
    health_status: { type: 'string', enum: ['healthy', 'degraded', 'unhealthy'] },
    estimated_fee_usd: { type: 'number', minimum: 0, maximum: ESTIMATED_FEE_USD_MAX },
    avg_confirmation_seconds: { type: 'number', minimum: 0, maximum: AVG_CONFIRMATION_SECONDS_MAX },
    rpc_error_rate: { type: 'number', minimum: 0, maximum: RPC_ERROR_RATE_MAX },
  },
} as const;
