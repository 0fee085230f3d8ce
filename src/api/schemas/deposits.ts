// JSON schema of an inbound transfer in operator views (GET /admin/deposits, the overview).
import { chainSchema, nullableTimestamp, timestamp } from './common.js';

export const depositSchema = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    chain: chainSchema,
    tx_id: { type: 'string' },
    index: { type: 'integer' },
    from_address: { type: 'string' },
    currency: { type: 'string' },
    amount: { type: 'string' },
    status: { type: 'string' },
    booked_as: { type: 'string', enum: ['funding', 'refund'] },
    payment_intent_id: { type: ['string', 'null'] },
    booked_at: timestamp,
    attached_at: nullableTimestamp,
  },
} as const;
