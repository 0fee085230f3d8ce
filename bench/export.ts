// `npm run bench:export`: the CSV exports (issue 29) on a database of 200k payments (BENCH_EXPORT_PAYMENTS) with their
// ledger (four transactions, eight postings each: 1.6M postings). The exports run as operators run them: over HTTP
// from `stableroute api` (a child process, its resident memory read from /proc every 50 ms while the bench reads the
// reply as a client would), and as `stableroute export --out FILE` (a child process too, sampled the same way). Each
// phase prints its time, its size and the process's RSS before, at its peak and after; the last three run the CLI and
// the api with the JavaScript heap capped at 64 MiB, which an export holding its rows could not finish. First, the
// plan and time of one page statement of each kind from the middle of the month. Writes bench/results/export.json.
// Figures are for reading, never asserted: the machine is shared.
//   BENCH_EXPORT_PAYMENTS=200000   payments seeded
import { seedMerchantsAndQuotes } from './lib/seed.js';
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { migrate } from '../src/db/migrate.js';
import { createPool, type Queryable } from '../src/db/pool.js';
import { listPaymentExportRows } from '../src/db/queries/payment-export.js';
import { postingExportWindow } from '../src/ledger/posting-export.js';
import { EXPORT_LEDGER_WINDOW_TRANSACTIONS, EXPORT_PAYMENT_PAGE_ROWS } from '../src/bounds.js';
import { BIN } from '../test/helpers/process.js';
import { round } from './lib/load.js';
import { benchServer, createBenchDatabase, killOnExit, startService } from './lib/service.js';

const PAYMENTS = Number(process.env.BENCH_EXPORT_PAYMENTS ?? 200_000);
const SAMPLE_MS = 50;
/** The JavaScript heap the last phases allow (--max-old-space-size): an export that held its rows could not finish. */
const HEAP_CAP_MIB = 64;
const START = '2026-01-01T00:00:00Z';
/** Payments are spread over 30 days from START. */
const STEP_MS = Math.floor((30 * 86_400_000) / PAYMENTS);

/** Payments over a month, 20 merchants, both chains; 1% failed; each with its history, attempt and ledger postings. */
async function seed(db: Queryable, n: number): Promise<void> {
  // Merchant 7's name is a formula and holds a comma and quotes: the export must neutralise and quote it.
  await seedMerchantsAndQuotes(db, `CASE WHEN g = 7 THEN '=Bench, "merchant" ' || g ELSE 'Bench merchant ' || g END`);
  await db.query(
    `INSERT INTO payment_intents (id, merchant_id, quote_id, idempotency_key, amount_micros, status, selected_chain,
       destination_address, created_at, updated_at)
     SELECT 'pi_b' || lpad(g::text, 9, '0'), 'mer_b' || (g % 20 + 1), 'quo_b' || (g % 20 + 1), 'key-' || g, 1000000 + (g % 997) * 10001,
            CASE WHEN g % 100 = 1 THEN 'failed' ELSE 'settled' END,
            CASE WHEN g % 3 = 0 THEN 'ethereum' ELSE 'solana' END,
            CASE WHEN g % 3 = 0 THEN '0x' || lpad(to_hex(g % 1000), 40, '0') ELSE 'Sol' || md5((g % 1000)::text) END,
            $2::timestamptz + interval '1 millisecond' * (g::float8 * $3), $2::timestamptz + interval '1 millisecond' * (g::float8 * $3) + interval '20 seconds'
       FROM generate_series(1, $1) g`,
    [n, START, STEP_MS],
  );
  await db.query(
    `INSERT INTO payment_intent_transitions (payment_intent_id, from_status, to_status, reason, created_at)
     SELECT id, 'pending_confirmation', status, CASE WHEN status = 'failed' THEN 'reverted' END, updated_at FROM payment_intents WHERE id LIKE 'pi_b%'`,
  );
  await db.query(
    `INSERT INTO payment_attempts (id, payment_intent_id, chain, tx_id, status, signed_tx, estimated_fee_usd, actual_fee_native, created_at, broadcast_at, confirmed_at)
     SELECT 'att_' || substr(i.id, 4), i.id, i.selected_chain,
            CASE WHEN i.selected_chain = 'ethereum' THEN '0x' || md5(i.id) || md5(i.id || 'x') ELSE md5(i.id) || md5(i.id || 'y') END,
            CASE i.status WHEN 'settled' THEN 'confirmed' ELSE 'failed' END, 'signed', 0.01,
            CASE WHEN i.selected_chain = 'ethereum' THEN 50000000000000 ELSE 5000 END, i.created_at, i.created_at, i.updated_at
       FROM payment_intents i WHERE i.id LIKE 'pi_b%'`,
  );
  // reserve, debit, then settle (or release) and the fee at the outcome: what the lifecycle books for each payment.
  await db.query(
    `INSERT INTO ledger_transactions (type, chain, payment_intent_id, created_at)
     SELECT CASE WHEN s.type = 'settle' AND i.status = 'failed' THEN 'release' ELSE s.type END, i.selected_chain, i.id,
            i.created_at + s.offset_ms * interval '1 millisecond'
       FROM payment_intents i CROSS JOIN (VALUES (1, 'reserve', 0), (2, 'debit', 1000), (3, 'settle', 20000), (4, 'fee', 20000)) AS s(n, type, offset_ms)
      WHERE i.id LIKE 'pi_b%' ORDER BY i.created_at, s.n`,
  );
  await db.query(
    `INSERT INTO ledger_accounts (chain, currency, kind, stripe, balance)
     SELECT c.chain, k.currency, k.kind, 0, 0
       FROM (VALUES ('ethereum', 'ETH'), ('solana', 'SOL')) AS c(chain, native)
      CROSS JOIN LATERAL (VALUES ('USDC', 'treasury_available'), ('USDC', 'treasury_reserved'), ('USDC', 'treasury_in_flight'), ('USDC', 'payouts'),
                                 (c.native, 'treasury_native'), (c.native, 'network_fees')) AS k(currency, kind)
     ON CONFLICT (chain, currency, kind, stripe) DO NOTHING`,
  );
  await db.query(
    `WITH moves(type, sign, kind) AS (VALUES
       ('reserve', -1, 'treasury_available'), ('reserve', 1, 'treasury_reserved'), ('debit', -1, 'treasury_reserved'),
       ('debit', 1, 'treasury_in_flight'), ('settle', -1, 'treasury_in_flight'), ('settle', 1, 'payouts'),
       ('release', -1, 'treasury_in_flight'), ('release', 1, 'treasury_available'), ('fee', -1, 'treasury_native'), ('fee', 1, 'network_fees'))
     INSERT INTO ledger_postings (transaction_id, account_id, currency, amount)
     SELECT t.id, a.id, a.currency, m.sign * CASE WHEN t.type = 'fee' THEN (CASE t.chain WHEN 'ethereum' THEN 50000000000000 ELSE 5000 END) ELSE i.amount_micros END
       FROM ledger_transactions t
       JOIN payment_intents i ON i.id = t.payment_intent_id
       JOIN moves m ON m.type = t.type
       JOIN ledger_accounts a ON a.chain = t.chain AND a.kind = m.kind AND a.stripe = 0
                             AND a.currency = CASE WHEN t.type <> 'fee' THEN 'USDC' WHEN t.chain = 'ethereum' THEN 'ETH' ELSE 'SOL' END
      WHERE i.id LIKE 'pi_b%'
      ORDER BY t.id, m.sign`,
  );
  await db.query('UPDATE ledger_accounts a SET balance = COALESCE((SELECT SUM(p.amount) FROM ledger_postings p WHERE p.account_id = a.id), 0)');
  await db.query('VACUUM ANALYZE');
}

async function rssMiBOf(pid: number): Promise<number | null> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => '');
  const kb = /VmRSS:\s+(\d+)/.exec(status)?.[1];
  return kb === undefined ? null : Math.round(Number(kb) / 1024);
}

/** Samples `pid`'s RSS every SAMPLE_MS until `work` settles: the largest seen. */
async function peakRssDuring(pid: number, work: Promise<unknown>): Promise<number> {
  let peak = 0;
  let done = false;
  void work.then(() => (done = true), () => (done = true));
  while (!done) {
    peak = Math.max(peak, (await rssMiBOf(pid)) ?? 0);
    await new Promise((resolve) => setTimeout(resolve, SAMPLE_MS));
  }
  await work;
  return peak;
}

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  Plans?: PlanNode[];
}

const nodesOf = (plan: PlanNode): PlanNode[] => [plan, ...(plan.Plans ?? []).flatMap(nodesOf)];

/** The plan and execution time of the one statement `run` sends, as EXPLAIN ANALYZE reports them. */
async function explain(pool: Queryable, name: string, run: (db: Queryable) => Promise<unknown>): Promise<{ name: string; scans: string[]; executionMs: number }> {
  let plan: { Plan: PlanNode; 'Execution Time': number } | undefined;
  const explaining = {
    query: async (text: string, values?: unknown[]) => {
      const { rows } = await pool.query<{ 'QUERY PLAN': { Plan: PlanNode; 'Execution Time': number }[] }>(`EXPLAIN (ANALYZE, FORMAT JSON) ${text}`, values);
      plan = rows[0]!['QUERY PLAN'][0]!;
      return pool.query(text, values);
    },
  } as unknown as Queryable;
  await run(explaining);
  const scans = [...new Set(nodesOf(plan!.Plan).filter((n) => n['Node Type'].includes('Scan')).map((n) => `${n['Node Type']} ${n['Index Name'] ?? n['Relation Name'] ?? ''}`.trim()))];
  const result = { name, scans, executionMs: round(plan!['Execution Time'], 1) };
  console.log(`${name.padEnd(40)} ${String(result.executionMs).padStart(7)} ms  ${scans.join(', ')}`);
  return result;
}

interface Phase {
  name: string;
  rows: number;
  mib: number;
  seconds: number;
  rowsPerSecond: number;
  firstByteMs: number | null;
  rssMiB: { before: number | null; peak: number; after: number | null };
}

/** Reads the reply as a client does, counting rows (CRLF) and bytes and keeping nothing. */
async function overHttp(name: string, apiPid: number, url: string): Promise<Phase> {
  const before = await rssMiBOf(apiPid);
  const start = performance.now();
  let firstByteMs: number | null = null;
  let rows = 0;
  let bytes = 0;
  const read = (async () => {
    const res = await fetch(url);
    if (res.status !== 200 || !res.body) throw new Error(`${url}: ${res.status} ${await res.text()}`);
    for await (const chunk of res.body as AsyncIterable<Uint8Array>) {
      firstByteMs ??= performance.now() - start;
      bytes += chunk.length;
      for (const byte of chunk) if (byte === 0x0a) rows++;
    }
  })();
  const peak = await peakRssDuring(apiPid, read);
  const seconds = (performance.now() - start) / 1000;
  return phase(name, rows - 1, bytes, seconds, firstByteMs, { before, peak, after: await rssMiBOf(apiPid) });
}

/** `stableroute export ... --out FILE` as a child process, its RSS sampled until it exits. */
async function overCli(name: string, env: Record<string, string>, args: string[], dir: string, nodeFlags: string[] = []): Promise<Phase> {
  const file = join(dir, `${name.replace(/\W+/g, '-')}.csv`);
  const start = performance.now();
  const child = spawn(process.execPath, [...nodeFlags, BIN, 'export', ...args, '--out', file], {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  killOnExit(child);
  let stderr = '';
  child.stderr.on('data', (c) => (stderr += c));
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  const peak = await peakRssDuring(child.pid!, exited);
  if ((await exited) !== 0) throw new Error(`export ${args.join(' ')} failed: ${stderr}`);
  const seconds = (performance.now() - start) / 1000;
  const text = await readFile(file);
  let rows = 0;
  for (const byte of text) if (byte === 0x0a) rows++;
  const size = (await stat(file)).size;
  await rm(file);
  return phase(name, rows - 1, size, seconds, null, { before: null, peak, after: null });
}

function phase(name: string, rows: number, bytes: number, seconds: number, firstByteMs: number | null, rssMiB: Phase['rssMiB']): Phase {
  const result = { name, rows, mib: round(bytes / 1048576, 1), seconds: round(seconds, 1), rowsPerSecond: Math.round(rows / seconds), firstByteMs: firstByteMs === null ? null : round(firstByteMs, 0), rssMiB };
  console.log(
    `${name.padEnd(40)} ${String(rows).padStart(9)} rows ${String(result.mib).padStart(7)} MiB ${String(result.seconds).padStart(6)} s ` +
      `${String(result.rowsPerSecond).padStart(7)} rows/s  RSS ${rssMiB.before ?? '-'} -> peak ${rssMiB.peak} -> ${rssMiB.after ?? '-'} MiB`,
  );
  return result;
}

async function main(): Promise<void> {
  const server = await benchServer();
  const db = await createBenchDatabase(server.url);
  const pool = createPool(db.url, 2);
  const dir = await mkdtemp(join(tmpdir(), 'stableroute-export-bench-'));
  let api: Awaited<ReturnType<typeof startService>> | undefined;
  try {
    await migrate(pool);
    const env = { DATABASE_URL: db.url };
    api = await startService('api', env);
    const seedStart = performance.now();
    await seed(pool, PAYMENTS);
    const counts = (await pool.query<{ postings: string }>('SELECT COUNT(*)::text AS postings FROM ledger_postings')).rows[0]!;
    console.log(`seeded ${PAYMENTS} payments, ${counts.postings} ledger postings in ${round((performance.now() - seedStart) / 1000, 1)} s\n`);

    // One statement of each kind, from the middle of the month: what every page costs, and that it scans an index.
    const middle = (await pool.query<{ at: string; id: string; tx: string }>(
      `SELECT to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS at, id,
              (SELECT t.id::text FROM ledger_transactions t WHERE t.payment_intent_id = i.id ORDER BY t.id LIMIT 1) AS tx
         FROM payment_intents i WHERE id = 'pi_b' || lpad($1::text, 9, '0')`,
      [Math.floor(PAYMENTS / 2)],
    )).rows[0]!;
    const month = { from: '2026-01-01T00:00:00Z', to: '2026-02-01T00:00:00Z', chain: null, merchantId: null, status: null };
    const plans = [
      await explain(pool, 'payments page, mid-month', (db) => listPaymentExportRows(db, month, { createdAt: middle.at, id: middle.id }, EXPORT_PAYMENT_PAGE_ROWS)),
      await explain(pool, 'payments page, one merchant', (db) => listPaymentExportRows(db, { ...month, merchantId: 'mer_b7' }, { createdAt: middle.at, id: middle.id }, EXPORT_PAYMENT_PAGE_ROWS)),
      await explain(pool, 'payments page, chain=ethereum', (db) => listPaymentExportRows(db, { ...month, chain: 'ethereum' }, { createdAt: middle.at, id: middle.id }, EXPORT_PAYMENT_PAGE_ROWS)),
      await explain(pool, 'ledger window, mid-month', (db) => postingExportWindow(db, month, { createdAt: middle.at, id: middle.tx }, EXPORT_LEDGER_WINDOW_TRANSACTIONS)),
      await explain(pool, 'ledger window, one merchant', (db) => postingExportWindow(db, { ...month, merchantId: 'mer_b7' }, { createdAt: middle.at, id: middle.tx }, EXPORT_LEDGER_WINDOW_TRANSACTIONS)),
    ];
    console.log('');

    const quarterEnd = new Date(Date.parse(START) + (PAYMENTS / 4) * STEP_MS + 1).toISOString();
    const all = 'from=2026-01-01&to=2026-02-01';
    const phases: Phase[] = [];
    const admin = `${api.url}/admin/exports`;
    phases.push(await overHttp('HTTP payments, a quarter', api.pid, `${admin}/payments.csv?from=2026-01-01&to=${quarterEnd}`));
    phases.push(await overHttp('HTTP payments, all', api.pid, `${admin}/payments.csv?${all}`));
    phases.push(await overHttp('HTTP payments, one merchant (5%)', api.pid, `${admin}/payments.csv?${all}&merchant_id=mer_b7`));
    phases.push(await overCli('CLI payments, an empty period', env, ['payments', '--from', '2025-01-01', '--to', '2025-01-02'], dir));
    phases.push(await overCli('CLI payments, all', env, ['payments', '--from', '2026-01-01', '--to', '2026-02-01'], dir));
    phases.push(await overHttp('HTTP ledger, a quarter of the payments', api.pid, `${admin}/ledger.csv?from=2026-01-01&to=${quarterEnd}`));
    phases.push(await overHttp('HTTP ledger, all', api.pid, `${admin}/ledger.csv?${all}`));
    phases.push(await overCli('CLI ledger, all', env, ['ledger', '--from', '2026-01-01', '--to', '2026-02-01'], dir));
    // Again with the JavaScript heap capped, the CLI and then the api: RSS above depends on when V8 collects garbage;
    // these show the exports need no more than the cap.
    phases.push(await overCli(`CLI ledger, all, heap capped at ${HEAP_CAP_MIB} MiB`, env, ['ledger', '--from', '2026-01-01', '--to', '2026-02-01'], dir, [`--max-old-space-size=${HEAP_CAP_MIB}`]));
    await api.stop();
    api = await startService('api', { ...env, NODE_OPTIONS: `--max-old-space-size=${HEAP_CAP_MIB}` });
    phases.push(await overHttp(`HTTP payments, all, heap capped at ${HEAP_CAP_MIB} MiB`, api.pid, `${api.url}/admin/exports/payments.csv?${all}`));
    phases.push(await overHttp(`HTTP ledger, all, heap capped at ${HEAP_CAP_MIB} MiB`, api.pid, `${api.url}/admin/exports/ledger.csv?${all}`));

    const out = new URL('./results/', import.meta.url);
    await mkdir(out, { recursive: true });
    await writeFile(
      new URL('export.json', out),
      `${JSON.stringify({ at: new Date().toISOString(), machine: { cores: cpus().length, cpu: cpus()[0]?.model ?? null, node: process.version }, payments: PAYMENTS, postings: Number(counts.postings), plans, phases }, null, 2)}\n`,
    );
    console.log('\nwritten to bench/results/export.json');
  } finally {
    await api?.stop();
    await pool.end();
    await db.drop();
    await server.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

await main();
