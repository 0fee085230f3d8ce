// GET /admin/statuses: the statuses a payment intent and a webhook event can have, as the domain lists them, and which
// of a payment's are final. The console reads them once at sign-in for its filters, tabs and counts, so the one list
// is the domain's (issue 39); a status added there reaches the console without a change to it.
import type { FastifyInstance } from 'fastify';
import { PAYMENT_STATUSES, TERMINAL_STATUSES } from '../../domain/payment-intent.js';
import { WEBHOOK_EVENT_STATUSES } from '../../domain/webhook-delivery.js';
import { statusesSchema } from '../schemas/operator.js';

const STATUSES = {
  payment_statuses: PAYMENT_STATUSES,
  final_payment_statuses: TERMINAL_STATUSES,
  webhook_event_statuses: WEBHOOK_EVENT_STATUSES,
} as const;

export function adminStatusRoutes(app: FastifyInstance): void {
  app.get(
    '/admin/statuses',
    {
      schema: {
        tags: ['admin'],
        summary: 'The statuses of payment intents (which of them final) and of webhook events, in the order the service lists them',
        response: { 200: statusesSchema },
      },
    },
    async () => STATUSES,
  );
}
