// /admin/exports/*.csv: payments and ledger postings as CSV for accounting (issue 29). Thin: the filters are checked
// by the schema and by the use case, which records the export in the audit log and reads the first page before the
// reply starts; then the reply streams page by page, each read when the socket has taken the one before.
import { Readable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../../core/context.js';
import type { ExportFilterInput } from '../../core/exports/filter.js';
import { EXPORTS_AT_ONCE_MAX } from '../../bounds.js';
import { openExport, type ExportKind } from '../../core/exports/stream.js';
import { AppError } from '../../domain/errors.js';
import { actorOf } from '../audit.js';
import { errorRef } from '../schemas/common.js';
import { csvResponse, exportQuery } from '../schemas/exports.js';

const SUMMARIES: Record<ExportKind, string> = {
  payments: 'Payment intents created in [from, to), oldest first, one CSV row each (amounts exact, times UTC, tx id and fee)',
  ledger: 'Ledger postings of the transactions booked in [from, to), oldest first, one CSV row each (signed exact amounts)',
};

export function adminExportRoutes(app: FastifyInstance, ctx: AppContext): void {
  const streaming = new Set<Readable>();
  let running = 0;
  // A shutdown does not wait for an export that could run for minutes: it is cut short, as an incomplete transfer.
  app.addHook('preClose', async () => {
    for (const body of streaming) body.destroy(new Error('the service is shutting down'));
  });

  for (const kind of ['payments', 'ledger'] as const) {
    app.get<{ Querystring: ExportFilterInput }>(
      `/admin/exports/${kind}.csv`,
      {
        schema: {
          tags: ['admin'],
          summary: SUMMARIES[kind],
          querystring: exportQuery,
          response: { 200: csvResponse(`RFC 4180 CSV of ${kind}`), 400: errorRef, 503: errorRef },
        },
        config: { validationCodes: { '': 'INVALID_FILTER' } },
      },
      async (request, reply) => {
        // The slot is taken before the export opens, so concurrent openings cannot all pass the check.
        if (running >= EXPORTS_AT_ONCE_MAX) {
          reply.header('retry-after', '5');
          throw new AppError('SERVICE_UNAVAILABLE', `at most ${EXPORTS_AT_ONCE_MAX} exports run at once; retry shortly`);
        }
        running++;
        let exported;
        try {
          exported = await openExport(ctx, { kind, filter: request.query, actor: actorOf(request) });
        } catch (error) {
          running--;
          throw error;
        }
        const body = Readable.from(exported.chunks, { objectMode: false });
        streaming.add(body);
        body.once('close', () => {
          streaming.delete(body);
          running--;
        });
        // A failure after the first page cuts the chunked reply short (no final chunk): clients see an incomplete
        // transfer, never a file that looks whole. Fastify logs it.
        return reply
          .type('text/csv; charset=utf-8; header=present')
          .header('content-disposition', `attachment; filename="${exported.filename}"`)
          .header('cache-control', 'no-store')
          .send(body);
      },
    );
  }
}
