// A steady load of payouts made the way a careful client makes them, for tests that take the database away under it
// (a failover, a pooler): quote, then create under one idempotency key, retrying 503s and refused connections until
// 201. Every 5xx must be the spec's clean 503; anything else is recorded as a violation.

const SOL = '9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM';
const ETH = '0x52908400098527886E0F7030069857D2E4169EE7';
/** A client's pause before it retries after a 503 or a refused connection. */
const RETRY_PAUSE_MS = 100;
/** A client gives up on one payout after this long (a process that died never answers again). */
const PAYOUT_DEADLINE_MS = 60_000;

export interface LoadReport {
  violations: string[];
  unavailable: number;
  /** Quotes a crash of PostgreSQL took back after they were answered (decision 135): the client quotes again. */
  quotesLost: number;
  /** Idempotency key -> payment id, for every creation answered 201. */
  created: Map<string, string>;
  /** Base url -> Date.now() of its last 201. */
  lastCreatedAt: Map<string, number>;
}

export interface Load {
  report: LoadReport;
  /** Stops starting payouts; the ones under way are carried through, as a client would. */
  stop(): Promise<void>;
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export function emptyReport(): LoadReport {
  return { violations: [], unavailable: 0, quotesLost: 0, created: new Map(), lastCreatedAt: new Map() };
}

/** A 5xx must be the spec's error body, 503 SERVICE_UNAVAILABLE; anything else is recorded. True: retry. */
async function unavailable(res: Response, what: string, report: LoadReport): Promise<boolean> {
  if (res.status < 500) return false;
  const body = (await res.json().catch(() => null)) as Record<string, unknown> | null;
  const clean =
    res.status === 503 && body?.statusCode === 503 && body.error === 'Service Unavailable' && body.code === 'SERVICE_UNAVAILABLE' && typeof body.message === 'string';
  if (!clean) report.violations.push(`${what}: ${res.status} ${JSON.stringify(body)}`);
  report.unavailable++;
  return true;
}

async function post(base: string, path: string, body: unknown): Promise<Response> {
  return fetch(`${base}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': 'dev' }, body: JSON.stringify(body) });
}

/** One payout to completion (201), re-quoting when a crash took the quote back. */
export async function payout(base: string, key: string, i: number, report: LoadReport, running: () => boolean = () => true): Promise<void> {
  for (;;) {
    const outcome = await quotedPayout(base, key, i, report, running);
    if (outcome !== 'quote lost') return;
    report.quotesLost++;
  }
}

async function quotedPayout(base: string, key: string, i: number, report: LoadReport, running: () => boolean): Promise<'done' | 'quote lost'> {
  const destination = i % 2 ? { solana_address: SOL } : { ethereum_address: ETH };
  let quoteId: string | undefined;
  const deadline = Date.now() + PAYOUT_DEADLINE_MS;
  while (quoteId === undefined) {
    if (!running()) return 'done';
    if (Date.now() > deadline) {
      report.violations.push(`quote ${key}: no 201 within ${PAYOUT_DEADLINE_MS} ms`);
      return 'done';
    }
    const res = await post(base, '/quotes', { amount_usd: 1 + (i % 7), destination, priority: 'fast' }).catch((error: unknown) => error as Error);
    if (res instanceof Error) report.violations.push(`quote ${key}: ${String(res.cause ?? res)}`);
    else if (res.status === 201) quoteId = ((await res.json()) as { quote_id: string }).quote_id;
    else if (!(await unavailable(res, `quote ${key}`, report))) report.violations.push(`quote ${key}: ${res.status} ${await res.text()}`);
    if (quoteId === undefined) await pause(RETRY_PAUSE_MS);
  }
  let refused = false; // a 503 came first: the retry must create the payment, not replay it
  for (;;) {
    if (Date.now() > deadline) {
      report.violations.push(`create ${key}: no 201 within ${PAYOUT_DEADLINE_MS} ms`);
      return 'done';
    }
    const res = await post(base, '/payment_intents', { quote_id: quoteId, idempotency_key: key }).catch((error: unknown) => error as Error);
    if (res instanceof Error) report.violations.push(`create ${key}: ${String(res.cause ?? res)}`);
    else if (res.status === 201) {
      if (refused && res.headers.get('idempotent-replayed') === 'true') report.violations.push(`create ${key}: a 503 had created the payment`);
      report.created.set(key, ((await res.json()) as { payment_intent_id: string }).payment_intent_id);
      report.lastCreatedAt.set(base, Date.now());
      return 'done';
    } else if (await unavailable(res, `create ${key}`, report)) refused = true;
    else {
      const text = await res.text();
      if (res.status === 404 && (JSON.parse(text) as { code?: string }).code === 'QUOTE_NOT_FOUND') return 'quote lost';
      report.violations.push(`create ${key}: ${res.status} ${text}`);
      return 'done';
    }
    await pause(RETRY_PAUSE_MS);
  }
}

/** `loops` clients paying out at once over `bases`, each pausing `pauseMs` after a payout: a steady load, not a benchmark. */
export function startLoad(bases: readonly string[], keyPrefix: string, options: { loops: number; pauseMs: number }): Load {
  const report = emptyReport();
  let running = true;
  const loops = Array.from({ length: options.loops }, async (_, loop) => {
    for (let n = 0; running; n++) {
      await payout(bases[(loop + n) % bases.length]!, `${keyPrefix}-${loop}-${n}`, n, report, () => running);
      await pause(options.pauseMs);
    }
  });
  return {
    report,
    stop: async () => {
      running = false;
      await Promise.all(loops);
    },
  };
}
