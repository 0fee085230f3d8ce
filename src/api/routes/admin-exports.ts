// /admin/exports/*.csv: payments and ledger postings as CSV for accounting (issue 29). Thin: the filters are checked
// by the schema and by the use case, which records the export in the audit log and reads the first page before the
// reply starts; then the reply streams page by page, each read when the socket has taken the one before.
import { Readable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../../core/context.js';
import type { ExportFilterInput } from '../../core/exports/filter.js';
import { openExport, type ExportKind } from '../../core/exports/stream.js';
import { actorOf } from '../audit.js';
import { errorRef } from '../schemas/common.js';
import { csvResponse, exportQuery } from '../schemas/exports.js';

const SUMMARIES: Record<ExportKind, string> = {
  payments: 'Payment intents created in [from, to), oldest first, one CSV row each (amounts exact, times UTC, tx id and fee)',
  ledger: 'Ledger postings of the transactions booked in [from, to), oldest first, one CSV row each (signed exact amounts)',
};

export function adminExportRoutes(app: FastifyInstance, ctx: AppContext): void {
  for (const kind of ['payments', 'ledger'] as const) {
    app.get<{ Querystring: ExportFilterInput }>(
      `/admin/exports/${kind}.csv`,
      {
        schema: {
          tags: ['admin'],
          summary: SUMMARIES[kind],
          querystring: exportQuery,
          response: { 200: csvResponse(`RFC 4180 CSV of ${kind}`), 400: errorRef },
        },
        config: { validationCodes: { '': 'INVALID_FILTER' } },
      },
      async (request, reply) => {
        const exported = await openExport(ctx, { kind, filter: request.query, actor: actorOf(request) });
        // A failure after the first page cuts the chunked reply short (no final chunk): clients see an incomplete
        // transfer, never a file that looks whole. Fastify logs it.
        return reply
          .type('text/csv; charset=utf-8; header=present')
          .header('content-disposition', `attachment; filename="${exported.filename}"`)
          .header('cache-control', 'no-store')
          .send(Readable.from(exported.chunks, { objectMode: false }));
      },
    );
  }
}
