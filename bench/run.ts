// `npm run bench`: the service's throughput, latency and memory, beside this machine's own limits measured in the same
// run, printed as ratios and written to bench/results/latest.json. Bounded (a few minutes); real HTTP on loopback,
// the service as a child process (`stableroute serve`, workers running), PostgreSQL from DATABASE_URL or embedded.
//   BENCH_SECONDS=10            length of each throughput phase
//   BENCH_SUSTAINED_SECONDS=60  length of the sustained run
//   BENCH_CONCURRENCY=16        clients of the closed-loop phases
//   BENCH_CPU_PROF=<dir>        the service writes a V8 CPU profile of its run there
//   BENCH_ONLY=screening        run only the screening phase (quotes with and without a 10,000-address list)
//   BENCH_ONLY=throughput       run only the baselines and the service's throughput phase (quotes, creations, sustained)
//   BENCH_ONLY=onchain          run only the on-chain batch phase (a payroll on the devnet, batched and not)
//   BENCH_ONCHAIN_PAYMENTS=1000 payments of each payroll of the on-chain phase (half on each chain)
//   BENCH_ONCHAIN_BLOCK_SECONDS=1  seconds between Ethereum blocks while the payrolls run (mainnet: 12)
//   BENCH_ONLY=api              run only the reservation baseline and the creations with no worker (`stableroute api`)
//   BENCH_ONLY=processes        run only the two-process phase: `api` and `worker` apart on one database, beside `serve`
//   BENCH_ONCHAIN_PAYMENTS=1000 payments of that payroll, half on each chain (one POST /payout_batches: at most 1,000)
//   BENCH_BIN=<path>            the `stableroute` command to measure (another checkout's bin/stableroute.js: an A/B)
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { randomBytes } from 'node:crypto';
import { getBase58Decoder } from '@solana/kit';
import pg from 'pg';
import { getAddress } from 'viem';
import { isWellFormedEthereumAddress, isWellFormedSolanaAddress } from '../src/domain/addresses.js';
import { createPool } from '../src/db/pool.js';
import { verifyLedger } from '../src/ledger/verify.js';
import { helloWorldBaseline, reservationBaseline } from './lib/baselines.js';
import { cpuPerPayment, cpuSnapshot, servicesTogether, type CpuPerPayment } from './lib/cpu.js';
import { startBenchDevnet, watchHeads } from './lib/devnet.js';
import { onchainPhase, type OnchainRun } from './lib/onchain.js';
import { closeConnections, closedLoop, openLoop, percentile, round, send, type LoadResult } from './lib/load.js';
import { startReceiver } from './lib/receiver.js';
import { benchServer, createBenchDatabase, startService, startWorker, type Service } from './lib/service.js';
import { TERMINAL_STATUSES } from '../src/domain/payment-intent.js';
import { checkDenylist, parseDenylist } from '../src/domain/screening.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const ONLY = process.env.BENCH_ONLY ?? null;
const SCREENING_LIST_ADDRESSES = 10_000;
const SUSTAINED_SECONDS = Number(process.env.BENCH_SUSTAINED_SECONDS ?? 60);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 16);
const ONCHAIN_PAYMENTS = Number(process.env.BENCH_ONCHAIN_PAYMENTS ?? 1000);
/** Seconds between the devnet's Ethereum blocks while the payrolls run (1, as `stableroute devnet`; mainnet's is 12). */
const ONCHAIN_BLOCK_SECONDS = Number(process.env.BENCH_ONCHAIN_BLOCK_SECONDS ?? 1);
const DRAIN_LIMIT_SECONDS = 120;
const WARM_UP_SECONDS = 2;
const SOL = '9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM';
const KEY = { 'x-api-key': 'bench' };
const QUOTE = { amount_usd: 1.25, destination: { solana_address: SOL }, priority: 'fast' };

async function quote(service: Service, body: object = QUOTE): Promise<string> {
  const res = await send('POST', `${service.url}/quotes`, body, KEY);
  if (res.status !== 201) throw new Error(`quote refused: ${res.body}`);
  return (JSON.parse(res.body) as { quote_id: string }).quote_id;
}

/** Intent creations against a few quotes (a quote may back several intents; each has its own idempotency key). */
function intentCreator(service: Service, quotes: string[], prefix: string, created?: Map<string, number>) {
  return async (i: number): Promise<boolean> => {
    const res = await send('POST', `${service.url}/payment_intents`, { quote_id: quotes[i % quotes.length], idempotency_key: `${prefix}-${i}` }, KEY);
    if (res.status !== 201) return false;
    if (created) {
      const body = JSON.parse(res.body) as { payment_intent_id: string; created_at: string };
      created.set(body.payment_intent_id, Date.parse(body.created_at));
    }
    return true;
  };
}

async function openIntents(pool: pg.Pool): Promise<number> {
  const { rows } = await pool.query<{ n: number }>('SELECT COUNT(*)::int AS n FROM payment_intents WHERE status <> ALL($1)', [TERMINAL_STATUSES]);
  return rows[0]!.n;
}

const ms = (values: number[]) => ({ p50: round(percentile(values, 50), 0), p99: round(percentile(values, 99), 0), n: values.length });

async function throughput(serverUrl: string, reservationTps: number) {
  const db = await createBenchDatabase(serverUrl);
  const receiver = await startReceiver();
  const service = await startService('serve', {
    DATABASE_URL: db.url,
    SIM_TREASURY_USDC: '1000000000',
    SIM_CONFIRM_SECONDS: '1',
    DEV_MERCHANT_WEBHOOK_URL: receiver.url,
    // The bench measures capacity, not the per-merchant limit (decision 93); one merchant sends all the load.
    RATE_LIMIT_PER_MINUTE: '0',
  });
  const pool = createPool(db.url, 2);
  const rss = setInterval(() => void service.sampleRss(), 1000);
  try {
    const quoteOnce = async () => (await send('POST', `${service.url}/quotes`, QUOTE, KEY)).status === 201;
    // The first phase of a fresh process: a short warm-up, not counted, so that the figure is the service's and not
    // V8's compiler at work (the hello-world baseline's one route warms up within its first milliseconds).
    await closedLoop('warm-up', CONCURRENCY, WARM_UP_SECONDS, quoteOnce);
    const quotes = await closedLoop('POST /quotes', CONCURRENCY, SECONDS, quoteOnce);
    const backing = await Promise.all(Array.from({ length: 8 }, () => quote(service)));
    const intents = await closedLoop('POST /payment_intents', CONCURRENCY, SECONDS, intentCreator(service, backing, 'closed'));
    const halfRate = Math.max(1, Math.round(intents.perSecond / 2));
    const halfLoad = await openLoop(`intents at ${halfRate}/s`, halfRate, SECONDS, intentCreator(service, backing, 'half'));

    // The bursts above leave a backlog (they create faster than settlement can follow). It drains first, timed as its
    // own figure, so that the sustained run starts from none and its backlog is its own.
    const burstBacklog = await openIntents(pool);
    const burstDrainSeconds = await drain(pool);
    // Sustained: half the measured creation rate, settlement on 1 s finality; the backlog sampled every second.
    const backlog: { second: number; open: number }[] = [];
    const settledBefore = await settledCount(pool);
    const cpuBefore = await cpuSnapshot(service.pid);
    const started = performance.now();
    const sustained = await openLoop(`sustained ${halfRate}/s`, halfRate, SUSTAINED_SECONDS, intentCreator(service, backing, 'sustained'), (second) => {
      void openIntents(pool).then((open) => backlog.push({ second, open }));
    });
    const runSeconds = (performance.now() - started) / 1000;
    const settledDuring = (await settledCount(pool)) - settledBefore;
    const drainSeconds = await drain(pool);
    // Every payment of the run created, settled and told to its merchant: the CPU each cost, by process.
    const cpuAfter = await cpuSnapshot(service.pid);
    const cpu = cpuBefore && cpuAfter ? cpuPerPayment(cpuBefore, cpuAfter, sustained.requests) : null;
    // The job path: from the reservation's commit to the transfer sent, through the pg-boss queue and the execution.
    const { rows: toBroadcast } = await pool.query<{ ms: number }>(
      `SELECT EXTRACT(EPOCH FROM (b.created_at - r.created_at)) * 1000 AS ms
         FROM payment_intent_transitions r
         JOIN payment_intent_transitions b ON b.payment_intent_id = r.payment_intent_id AND b.to_status = 'broadcasted'
        WHERE r.to_status = 'route_selected'`,
    );
    await service.sampleRss();
    const ledger = await verifyLedger(pool);
    return {
      quotes,
      intents,
      halfLoad,
      burst: { backlog: burstBacklog, drainSeconds: burstDrainSeconds },
      sustained: {
        ...sustained,
        settledPerSecond: round(settledDuring / runSeconds, 0),
        backlog: backlog.sort((a, b) => a.second - b.second),
        drainSeconds,
        cpuPerPayment: cpu,
        createdToBroadcastMs: ms(toBroadcast.map((r) => Number(r.ms))),
      },
      rssMiB: service.maxRssMiB,
      ledgerOk: ledger.ok,
      reservationTps,
    };
  } finally {
    clearInterval(rss);
    await pool.end();
    await service.stop();
    await receiver.close();
    await db.drop();
  }
}

/**
 * Creations with no worker at all (`stableroute api`): what the creation path alone costs, and the most creations a
 * second the cores could carry at that cost, whatever the workers do. The bench's own share (the load generator) is in
 * the figure, as it is in the baselines'.
 */
async function apiOnly(serverUrl: string) {
  const db = await createBenchDatabase(serverUrl);
  const service = await startService('api', { DATABASE_URL: db.url, SIM_TREASURY_USDC: '1000000000', RATE_LIMIT_PER_MINUTE: '0' }).catch(
    async (error: unknown) => {
      await db.drop();
      throw error;
    },
  );
  try {
    const backing = await Promise.all(Array.from({ length: 8 }, () => quote(service)));
    await closedLoop('warm-up', CONCURRENCY, WARM_UP_SECONDS, intentCreator(service, backing, 'api-warm-up'));
    const before = await cpuSnapshot(service.pid);
    const intents = await closedLoop('POST /payment_intents, api only', CONCURRENCY, SECONDS, intentCreator(service, backing, 'api'));
    const after = await cpuSnapshot(service.pid);
    return { intents, cpuPerCreation: before && after ? cpuPerPayment(before, after, intents.requests) : null };
  } finally {
    await service.stop();
    await db.drop();
  }
}

type Layout = 'serve' | 'api + worker';

/**
 * The production layout (docs/operating.md, production topology): `stableroute api` and `stableroute worker` as two
 * processes on one database, beside `serve` (both roles in one process), one after the other in this run so that their
 * ratio holds on a shared machine. Each: creations with the workers running (closed loop, after a warm-up whose backlog
 * drains first), the backlog that burst leaves drained, then a sustained run at half that rate: settled/s, the drain
 * after it, and the CPU each payment cost the service's processes together.
 */
async function processesPhase(serverUrl: string) {
  return { oneProcess: await pipeline(serverUrl, 'serve'), twoProcesses: await pipeline(serverUrl, 'api + worker') };
}

async function pipeline(serverUrl: string, layout: Layout) {
  const db = await createBenchDatabase(serverUrl);
  const receiver = await startReceiver();
  const env = { DATABASE_URL: db.url, SIM_TREASURY_USDC: '1000000000', SIM_CONFIRM_SECONDS: '1', DEV_MERCHANT_WEBHOOK_URL: receiver.url, RATE_LIMIT_PER_MINUTE: '0' };
  const services: Service[] = [];
  const pool = createPool(db.url, 2);
  const rss = setInterval(() => void Promise.all(services.map((s) => s.sampleRss())), 1000);
  try {
    const front = await startService(layout === 'serve' ? 'serve' : 'api', env);
    services.push(front);
    if (layout === 'api + worker') services.push(await startWorker(env));
    const backing = await Promise.all(Array.from({ length: 8 }, () => quote(front)));
    await closedLoop('warm-up', CONCURRENCY, WARM_UP_SECONDS, intentCreator(front, backing, 'warm-up'));
    await drain(pool);
    const intents = await closedLoop(`POST /payment_intents, ${layout}`, CONCURRENCY, SECONDS, intentCreator(front, backing, 'closed'));
    const burstBacklog = await openIntents(pool);
    const burstDrainSeconds = await drain(pool);
    const halfRate = Math.max(1, Math.round(intents.perSecond / 2));
    const snapshot = async () => servicesTogether(await Promise.all(services.map((s) => cpuSnapshot(s.pid))));
    const settledBefore = await settledCount(pool);
    const cpuBefore = await snapshot();
    const started = performance.now();
    const sustained = await openLoop(`sustained ${halfRate}/s, ${layout}`, halfRate, SUSTAINED_SECONDS, intentCreator(front, backing, 'sustained'));
    const runSeconds = (performance.now() - started) / 1000;
    const settledDuring = (await settledCount(pool)) - settledBefore;
    const drainSeconds = await drain(pool);
    const cpuAfter = await snapshot();
    return {
      layout,
      intents,
      burst: { backlog: burstBacklog, drainSeconds: burstDrainSeconds },
      sustained: { ...sustained, settledPerSecond: round(settledDuring / runSeconds, 0), drainSeconds },
      cpuPerPayment: cpuBefore && cpuAfter ? cpuPerPayment(cpuBefore, cpuAfter, sustained.requests) : null,
      rssMiB: services.map((s) => s.maxRssMiB),
      ledgerOk: (await verifyLedger(pool)).ok,
    };
  } finally {
    clearInterval(rss);
    await pool.end();
    for (const service of services.reverse()) await service.stop();
    await receiver.close();
    await db.drop();
  }
}

function processesLines(p: Awaited<ReturnType<typeof processesPhase>>): void {
  for (const run of [p.oneProcess, p.twoProcesses]) {
    const of = run === p.oneProcess ? '' : ` = ${ratio(run.intents.perSecond, p.oneProcess.intents.perSecond)} serve`;
    line(`creations, workers running: ${run.layout}`, describe(run.intents), `${run.burst.backlog} left open, drained in ${run.burst.drainSeconds ?? `> ${DRAIN_LIMIT_SECONDS}`} s${of}`);
    line(
      `sustained ${SUSTAINED_SECONDS} s at ${run.sustained.perSecond}/s: ${run.layout}`,
      `settled ${run.sustained.settledPerSecond}/s, p99 ${run.sustained.p99Ms} ms`,
      `drained in ${run.sustained.drainSeconds ?? `> ${DRAIN_LIMIT_SECONDS}`} s; RSS ${run.rssMiB.join(' + ')} MiB; ledger ${run.ledgerOk ? 'clean' : 'DIFFERENCES'}`,
    );
    if (run.cpuPerPayment) cpuLine(`CPU per payment: ${run.layout}`, run.cpuPerPayment, 'load+receiver', `${run.cpuPerPayment.ceilingPerSecond} payments/s at this cost`);
  }
}

/**
 * Screening with only the local list (issue 29): POST /quotes against an api process without a list and one with
 * SCREENING_LIST_FILE naming 10,000 addresses (the quoted recipient not among them), both running on the same
 * database, measured in turn A B B A so that drift on a shared machine falls on both alike; and, in process, what one
 * lookup in that list costs (the map lookup quotes make per destination).
 */
async function screeningQuotes(serverUrl: string) {
  const db = await createBenchDatabase(serverUrl);
  const dir = await mkdtemp(join(tmpdir(), 'stableroute-bench-screening-'));
  const listFile = join(dir, 'sanctioned.txt');
  const listed = Array.from({ length: SCREENING_LIST_ADDRESSES }, (_, i) =>
    i % 10 === 0 ? getBase58Decoder().decode(randomBytes(32)) : `0x${randomBytes(20).toString('hex')}`,
  );
  const text = `# bench list\n${listed.map((a, i) => (i % 2 === 0 ? `${a} # source ${i}` : a)).join('\n')}\n`;
  await writeFile(listFile, text);
  const services: Service[] = [];
  const start = async (env: Record<string, string>) => {
    const service = await startService('api', { DATABASE_URL: db.url, SIM_TREASURY_USDC: '1000000000', RATE_LIMIT_PER_MINUTE: '0', ...env });
    services.push(service);
    const quoteOnce = async () => (await send('POST', `${service.url}/quotes`, QUOTE, KEY)).status === 201;
    await closedLoop('warm-up', CONCURRENCY, WARM_UP_SECONDS, quoteOnce);
    return (label: string) => closedLoop(label, CONCURRENCY, SECONDS / 2, quoteOnce);
  };
  /** Two halves of one phase as one result: requests and errors added, rates and percentiles averaged. */
  const both = (a: LoadResult, b: LoadResult): LoadResult => ({
    name: a.name,
    requests: a.requests + b.requests,
    errors: a.errors + b.errors,
    seconds: a.seconds + b.seconds,
    perSecond: round((a.perSecond + b.perSecond) / 2, 0),
    p50Ms: round((a.p50Ms + b.p50Ms) / 2, 1),
    p99Ms: round((a.p99Ms + b.p99Ms) / 2, 1),
  });
  try {
    const plainRun = await start({});
    const screenedRun = await start({ SCREENING_LIST_FILE: listFile });
    const plainLabel = 'POST /quotes, no screening';
    const screenedLabel = `POST /quotes, ${SCREENING_LIST_ADDRESSES} listed addresses`;
    const a1 = await plainRun(plainLabel);
    const b1 = await screenedRun(screenedLabel);
    const b2 = await screenedRun(screenedLabel);
    const a2 = await plainRun(plainLabel);
    const plain = both(a1, a2);
    const screened = both(b1, b2);
    const list = parseDenylist(text);
    const recipients = Array.from({ length: 100_000 }, (_, i) => ({ chain: i % 2 === 0 ? 'ethereum' : 'solana', address: i % 3 === 0 ? listed[i % listed.length]! : SOL }));
    const started = performance.now();
    const hits = checkDenylist(list, recipients).filter((v) => v.hit).length;
    const lookupNanos = round(((performance.now() - started) * 1e6) / recipients.length, 0);
    return { plain, screened, listAddresses: list.size, lookupNanos, hits };
  } finally {
    for (const service of services) await service.stop();
    await db.drop();
    await rm(dir, { recursive: true, force: true });
  }
}

function screeningLines(s: Awaited<ReturnType<typeof screeningQuotes>>): void {
  line('POST /quotes, no screening', describe(s.plain), 'baseline of the screening phase');
  line(
    `POST /quotes, ${s.listAddresses} listed addresses`,
    describe(s.screened),
    `${round(s.screened.perSecond / s.plain.perSecond, 2)}x unscreened; one lookup ${s.lookupNanos} ns (target: no measurable difference)`,
  );
}

/** Seconds until no payment is open (null past DRAIN_LIMIT_SECONDS), polled every 250 ms. */
async function drain(pool: pg.Pool): Promise<number | null> {
  const started = performance.now();
  while ((await openIntents(pool)) > 0) {
    if (performance.now() - started > DRAIN_LIMIT_SECONDS * 1000) return null;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  return round((performance.now() - started) / 1000, 1);
}

async function settledCount(pool: pg.Pool): Promise<number> {
  const { rows } = await pool.query<{ n: number }>("SELECT COUNT(*)::int AS n FROM payment_intents WHERE status = 'settled'");
  return rows[0]!.n;
}

/** Latencies at default settings (default polls, chain-like simulated finality): a few payments, one at a time. */
async function latencies(serverUrl: string) {
  const db = await createBenchDatabase(serverUrl);
  const receiver = await startReceiver();
  const service = await startService('serve', { DATABASE_URL: db.url, DEV_MERCHANT_WEBHOOK_URL: receiver.url, RATE_LIMIT_PER_MINUTE: '0' });
  const pool = new pg.Pool({ connectionString: db.url, max: 2 });
  try {
    const created = new Map<string, number>();
    const backing = [await quote(service)];
    await openLoop('latency payments', 2, 10, intentCreator(service, backing, 'latency', created));
    const deadline = performance.now() + 90_000;
    while ((await openIntents(pool)) > 0 && performance.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 250));
    const arrival = (type: string, id: string) => receiver.arrivals.find((a) => a.eventType === type && a.paymentIntentId === id)?.at;
    const { rows } = await pool.query<{ payment_intent_id: string; confirmed_at: Date; final_at: Date }>(
      `SELECT a.payment_intent_id, a.confirmed_at, s.final_at FROM payment_attempts a
         JOIN sim_transactions s ON s.tx_id = a.tx_id WHERE a.status = 'confirmed'`,
    );
    const createdToWebhook: number[] = [];
    for (const [id, at] of created) {
      const got = arrival('payment.created', id);
      if (got !== undefined) createdToWebhook.push(got - at);
    }
    const finalityToSettled = rows.map((r) => r.confirmed_at.getTime() - r.final_at.getTime());
    const settledToWebhook = rows.flatMap((r) => {
      const got = arrival('payment.settled', r.payment_intent_id);
      return got === undefined ? [] : [got - r.confirmed_at.getTime()];
    });
    return { createdToWebhookMs: ms(createdToWebhook), finalityToSettledMs: ms(finalityToSettled), settledToWebhookMs: ms(settledToWebhook) };
  } finally {
    await pool.end();
    await service.stop();
    await receiver.close();
    await db.drop();
  }
}

/**
 * Finality -> settled on the local real chains (`stableroute devnet`: 1 s Ethereum blocks, 400 ms Solana slots) at
 * default settings: payments on each chain, a few a second, each transfer's finality read from the chains themselves.
 */
async function devnetLatency(serverUrl: string) {
  const devnet = await startBenchDevnet();
  const db = await createBenchDatabase(serverUrl).catch(async (error: unknown) => {
    await devnet.stop();
    throw error;
  });
  const watcher = watchHeads(devnet.env.ETHEREUM_RPC_URL!, devnet.env.SOLANA_RPC_URL!);
  let service: Service | undefined;
  const pool = new pg.Pool({ connectionString: db.url, max: 2 });
  try {
    service = await startService('serve', { ...devnet.env, DATABASE_URL: db.url, RATE_LIMIT_PER_MINUTE: '0' });
    const backing = [
      await quote(service, { ...QUOTE, destination: { ethereum_address: getAddress(`0x${randomBytes(20).toString('hex')}`) } }),
      await quote(service),
    ];
    const created = await openLoop('devnet payments', 2, 10, intentCreator(service, backing, 'devnet'));
    await drain(pool);
    const { rows } = await pool.query<{ chain: 'ethereum' | 'solana'; tx_id: string; confirmed_at: Date }>(
      "SELECT chain, tx_id, confirmed_at FROM payment_attempts WHERE status = 'confirmed'",
    );
    const confirmations = Number(devnet.env.ETHEREUM_CONFIRMATIONS);
    const byChain: Record<'ethereum' | 'solana', number[]> = { ethereum: [], solana: [] };
    for (const row of rows) {
      const finalAt = row.chain === 'ethereum' ? await watcher.ethereumFinalAt(row.tx_id, confirmations) : await watcher.solanaFinalAt(row.tx_id);
      if (finalAt !== null) byChain[row.chain].push(row.confirmed_at.getTime() - finalAt);
    }
    return {
      payments: created.requests,
      settled: rows.length,
      timed: byChain.ethereum.length + byChain.solana.length,
      finalityToSettledMs: { ethereum: ms(byChain.ethereum), solana: ms(byChain.solana), all: ms([...byChain.ethereum, ...byChain.solana]) },
    };
  } finally {
    await watcher.stop();
    await pool.end();
    await service?.stop();
    await db.drop();
    await devnet.stop();
  }
}

function line(label: string, value: string, ratio?: string): void {
  console.log(`${label.padEnd(44)} ${value.padEnd(30)} ${ratio ?? ''}`);
}

/** CPU per unit of work by process (`bench` names the bench's own share), and what the cores carry at that cost. */
function cpuLine(label: string, c: CpuPerPayment, bench: string, ceiling: string): void {
  line(label, `${c.machineMs} ms: service ${c.serviceMs}, PostgreSQL ${c.postgresMs}, ${bench} ${c.benchMs}`, `the cores carry at most ${ceiling}`);
}

const ratio = (a: number, b: number) => `${round(a / b, 2)}x`;

/** The baselines and the throughput phase's figures, each with its ratio to the same run's baseline. */
function throughputLines(
  reservation: Awaited<ReturnType<typeof reservationBaseline>>,
  hello: LoadResult,
  service: Awaited<ReturnType<typeof throughput>>,
): void {
  reservationLine(reservation);
  line('fastify hello-world', describe(hello), 'baseline');
  line('POST /quotes', describe(service.quotes), `${ratio(service.quotes.perSecond, hello.perSecond)} hello-world (target >= 0.25x)`);
  line('POST /payment_intents (one chain)', describe(service.intents), `${ratio(service.intents.perSecond, reservation.tps)} reservation (target >= 2x)`);
  line(`intents at half load`, describe(service.halfLoad), 'target p99 < 100 ms');
  line('backlog left by the bursts', `${service.burst.backlog} open`, `drained in ${service.burst.drainSeconds ?? `> ${DRAIN_LIMIT_SECONDS}`} s`);
  line(
    `sustained ${SUSTAINED_SECONDS} s at ${service.sustained.perSecond}/s`,
    `settled ${service.sustained.settledPerSecond}/s`,
    `drained in ${service.sustained.drainSeconds ?? `> ${DRAIN_LIMIT_SECONDS}`} s (target <= 10 s)`,
  );
  // The same half load from no backlog: the creations' own latency when nothing is left over from the bursts.
  line('creations during the sustained run', `p50 ${service.sustained.p50Ms} ms  p99 ${service.sustained.p99Ms} ms`);
  const cpu = service.sustained.cpuPerPayment;
  if (cpu) cpuLine('CPU per payment, sustained run to drained', cpu, 'load+receiver', `${cpu.ceilingPerSecond} payments/s at this cost`);
  line('max backlog during the sustained run', String(Math.max(0, ...service.sustained.backlog.map((b) => b.open))));
  line('reserved -> broadcasted (job path, all runs)', `p50 ${service.sustained.createdToBroadcastMs.p50} ms p99 ${service.sustained.createdToBroadcastMs.p99} ms`);
  line('service RSS under load', `${service.rssMiB} MiB`, 'target < 250 MB');
  line('ledger verify after the run', service.ledgerOk ? 'clean' : 'DIFFERENCES');
}

function reservationLine(reservation: Awaited<ReturnType<typeof reservationBaseline>>): void {
  line('one-row reservation transaction', `${reservation.tps} tps (${reservation.tool})`, 'baseline');
}

/** Creations with no worker at all, against the same run's reservation baseline. */
function apiOnlyLines(api: Awaited<ReturnType<typeof apiOnly>>, reservation: Awaited<ReturnType<typeof reservationBaseline>>): void {
  line('POST /payment_intents, api only (no workers)', describe(api.intents), `${ratio(api.intents.perSecond, reservation.tps)} reservation`);
  if (api.cpuPerCreation) {
    const c = api.cpuPerCreation;
    cpuLine('CPU per creation, api only', c, 'load', `${c.ceilingPerSecond} creations/s = ${ratio(c.ceilingPerSecond, reservation.tps)} reservation, with no worker`);
  }
}

/** The on-chain phase: per chain, batched against one transaction each, with the ratio of the cost per payment. */
function onchainLines(runs: OnchainRun[]): void {
  for (let r = 0; r < runs.length; r += 2) {
    const [batched, single] = [runs[r]!, runs[r + 1]!];
    const to = `to ${batched.holders} holders`;
    const [eb, es, sb] = [batched.ethereum, single.ethereum, batched.solana];
    const txs = (f: typeof eb) => `${f.settled}/${f.payments} settled in ${f.transactions} transactions`;
    line(`ethereum payroll ${to}, batched`, `${txs(eb)}, at most ${eb.paymentsPerBlockMax} in a block`, `${eb.gasPerPayment} gas a payment`);
    line(`ethereum payroll ${to}, one each`, `${txs(es)}, at most ${es.paymentsPerBlockMax} in a block`, `${es.gasPerPayment} gas a payment`);
    if (es.gasPerPayment) line(`ethereum gas per payment ${to}`, ratio(eb.gasPerPayment!, es.gasPerPayment), 'batched, of one transaction each (target <= 0.35x to existing)');
    line(`solana payroll ${to}, batched`, txs(sb), `${sb.lamportsFeePerPayment} lamports fee a payment (5000+ alone; target <= 0.1x)`);
    const clean = (run: OnchainRun) => (run.ledgerClean && run.reconcileClean ? 'clean' : `ledger ${run.ledgerClean ? 'clean' : 'DIFFERENCES'}, reconcile ${run.reconcileClean ? 'clean' : 'DIFFERENCES'}`);
    line(`payroll ${to}, request -> last payment.settled`, `batched ${batched.seconds} s, Ethereum one each ${single.seconds} s`, `ledger verify and reconcile: ${clean(batched)}, ${clean(single)}`);
  }
}

function describe(r: LoadResult): string {
  return `${r.perSecond}/s  p50 ${r.p50Ms} ms  p99 ${r.p99Ms} ms${r.errors ? `  errors ${r.errors}` : ''}`;
}

/**
 * What checking a destination costs on each chain, in process, with the functions quotes use: EIP-55 checksums of
 * distinct mixed-case addresses (viem caches its answers, so each address is checked once), and base58 decoding of
 * distinct Solana keys.
 */
function addressValidation(): { ethereumMicros: number; solanaMicros: number } {
  const rounds = 20_000;
  const ethereum = Array.from({ length: rounds }, () => getAddress(`0x${randomBytes(20).toString('hex')}`));
  const solana = Array.from({ length: rounds }, () => getBase58Decoder().decode(randomBytes(32)));
  const time = (addresses: string[], check: (a: string) => boolean) => {
    const started = performance.now();
    for (const address of addresses) if (!check(address)) throw new Error(`a valid address was refused: ${address}`);
    return round(((performance.now() - started) * 1000) / rounds, 2);
  };
  return {
    ethereumMicros: time(ethereum, isWellFormedEthereumAddress),
    solanaMicros: time(solana, isWellFormedSolanaAddress),
  };
}

async function main(): Promise<void> {
  const server = await benchServer();
  const serverUrl = server.url;
  try {
    console.log(`stableroute bench: ${cpus().length} cores (${cpus()[0]?.model ?? '?'}), ${Math.round(totalmem() / 2 ** 30)} GiB, node ${process.version}`);
    if (ONLY === 'onchain') {
      const onchain = await onchainPhase(serverUrl, ONCHAIN_PAYMENTS, ONCHAIN_BLOCK_SECONDS);
      console.log('');
      onchainLines(onchain);
      return;
    }
    if (ONLY === 'processes') {
      const processes = await processesPhase(serverUrl);
      console.log('');
      processesLines(processes);
      return;
    }
    if (ONLY === 'screening') {
      const screening = await screeningQuotes(serverUrl);
      console.log('');
      screeningLines(screening);
      return;
    }
    const baseDb = await createBenchDatabase(serverUrl);
    const reservation = await reservationBaseline(baseDb.url, CONCURRENCY, SECONDS).finally(() => baseDb.drop());
    if (ONLY === 'api') {
      const api = await apiOnly(serverUrl);
      console.log('');
      reservationLine(reservation);
      apiOnlyLines(api, reservation);
      return;
    }
    const hello = await helloWorldBaseline(CONCURRENCY, SECONDS);
    const service = await throughput(serverUrl, reservation.tps);
    if (ONLY === 'throughput') {
      console.log('');
      throughputLines(reservation, hello, service);
      return;
    }
    const api = await apiOnly(serverUrl);
    const processes = await processesPhase(serverUrl);
    const latency = await latencies(serverUrl);
    const devnet = await devnetLatency(serverUrl);
    const addresses = addressValidation();
    const screening = await screeningQuotes(serverUrl);
    const onchain = await onchainPhase(serverUrl, ONCHAIN_PAYMENTS, ONCHAIN_BLOCK_SECONDS);

    console.log('');
    throughputLines(reservation, hello, service);
    apiOnlyLines(api, reservation);
    processesLines(processes);
    line('address validation', `ethereum ${addresses.ethereumMicros} us, solana ${addresses.solanaMicros} us per check`);
    screeningLines(screening);
    line('created -> payment.created webhook', `p50 ${latency.createdToWebhookMs.p50} ms p99 ${latency.createdToWebhookMs.p99} ms`, 'target p50 < 100 ms');
    line('finality -> settled', `p50 ${latency.finalityToSettledMs.p50} ms p99 ${latency.finalityToSettledMs.p99} ms`, 'target p50 < 1 s, p99 < 2 s');
    line(
      'finality -> settled on the devnet',
      `p50 ${devnet.finalityToSettledMs.all.p50} ms p99 ${devnet.finalityToSettledMs.all.p99} ms (ethereum p50 ${devnet.finalityToSettledMs.ethereum.p50}, solana p50 ${devnet.finalityToSettledMs.solana.p50}; ${devnet.timed} of ${devnet.payments} payments timed)`,
      'target p50 < 1 s, p99 < 2 s',
    );
    line('settled -> payment.settled webhook', `p50 ${latency.settledToWebhookMs.p50} ms p99 ${latency.settledToWebhookMs.p99} ms`);

    onchainLines(onchain);

    const results = {
      at: new Date().toISOString(),
      machine: { cores: cpus().length, cpu: cpus()[0]?.model ?? null, memoryGiB: Math.round(totalmem() / 2 ** 30), node: process.version },
      settings: { seconds: SECONDS, sustainedSeconds: SUSTAINED_SECONDS, concurrency: CONCURRENCY },
      baselines: { reservation, hello },
      service,
      apiOnly: api,
      processes,
      latency,
      devnet,
      addresses,
      screening,
      onchain,
    };
    const dir = new URL('./results/', import.meta.url);
    await mkdir(dir, { recursive: true });
    await writeFile(new URL('latest.json', dir), `${JSON.stringify(results, null, 2)}\n`);
    console.log(`\nwritten to bench/results/latest.json`);
  } finally {
    closeConnections();
    await server.stop();
  }
}

await main();
