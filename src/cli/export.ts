// `stableroute export payments|ledger`: the CSV of GET /admin/exports/*.csv, byte for byte (the same use case), to
// stdout or a file. A file is written under a temporary name and renamed once complete, so a failed export never
// leaves a file that looks whole.
import { createWriteStream } from 'node:fs';
import { rename, rm } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { parseArgs } from 'node:util';
import { systemClock } from '../clock.js';
import type { Config } from '../config.js';
import { parseExportFilter, type ExportFilterInput } from '../core/exports/filter.js';
import { EXPORT_KINDS, openExport, type ExportKind } from '../core/exports/stream.js';
import { AppError } from '../domain/errors.js';
import { cliActor } from './actor.js';
import { refusable, usage } from './exits.js';
import type { CliHelpers } from './policies.js';

export const EXPORT_USAGE = `usage: stableroute export payments|ledger --from ISO --to ISO [--chain ethereum|solana] [--merchant-id ID]
                         [--status STATUS] [--out FILE]
       the period is [from, to): a UTC day (2026-03-01) or a date-time with an offset (2026-03-01T00:00:00Z)
`;

export async function exportCommand(args: string[], config: Config, h: Pick<CliHelpers, 'withDatabase'>): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      from: { type: 'string' },
      to: { type: 'string' },
      chain: { type: 'string' },
      'merchant-id': { type: 'string' },
      status: { type: 'string' },
      out: { type: 'string' },
    },
  });
  const kind = positionals[0] as ExportKind;
  if (positionals.length !== 1 || !EXPORT_KINDS.includes(kind) || values.from === undefined || values.to === undefined) return usage(EXPORT_USAGE);
  const filter: ExportFilterInput = { from: values.from, to: values.to, chain: values.chain, merchant_id: values['merchant-id'], status: values.status };
  try {
    parseExportFilter(filter, config.chainNames);
  } catch (error) {
    if (error instanceof AppError) return usage(EXPORT_USAGE, `${error.code}: ${error.message}`);
    throw error;
  }
  const out = values.out;
  return h.withDatabase(config, async (pool) =>
    refusable(async () => {
      const exported = await openExport({ pool, clock: systemClock, config }, { kind, filter, actor: cliActor() });
      const body = Readable.from(exported.chunks, { objectMode: false });
      if (out === undefined) {
        await pipeline(body, process.stdout, { end: false });
        return 0;
      }
      const partial = `${out}.partial`;
      try {
        await pipeline(body, createWriteStream(partial, { flags: 'w', mode: 0o600 }));
        await rename(partial, out);
      } catch (error) {
        await rm(partial, { force: true });
        throw error;
      }
      process.stderr.write(`${kind} written to ${out}\n`);
      return 0;
    }),
  );
}
