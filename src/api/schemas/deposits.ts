// JSON schema of an inbound transfer in operator views (GET /admin/deposits, the overview).
export const depositSchema = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    chain: { type: 'string' },
    tx_id: { type: 'string' },
    index: { type: 'integer' },
    from_address: { type: 'string' },
    currency: { type: 'string' },
    amount: { type: 'string' },
    status: { type: 'string' },
    booked_as: { type: 'string', enum: ['funding', 'refund'] },
    payment_intent_id: { type: ['string', 'null'] },
    booked_at: { type: 'string', format: 'date-time' },
    attached_at: { type: ['string', 'null'], format: 'date-time' },
  },
} as const;
