// Every bound of the service that is not a setting: batch sizes, lanes, pages, retries, timeouts, pool sizes, queue
// lengths. One module, so a reader sees what limits what, and where two bounds are tied the arithmetic is written
// here once. Units and qualifiers come last (`..._MAX`, `..._SECONDS`, `..._MS`). Settings an operator changes live in
// config.ts; these change only with the code.

// --- Execution (src/core/payments/execute, src/workers/execution.ts) -------------------------------------------------

/** Execution pollers per worker process: while one batch waits on the chain, the other's transactions run. */
export const EXECUTION_POLLERS = 2;
/**
 * Jobs one execution batch gathers at most: the unit every execution step runs on (claim, sign, record), and the
 * batching window of on-chain batches (issue 28), since a chain pays its payments of one batch in as few transactions
 * as it can (SIMULATED_, SOLANA_ and EVM_BATCH_TRANSFERS_MAX bound each one). A backlog fills it in one fetch.
 */
export const EXECUTION_BATCH_JOBS_MAX = 128;
/**
 * Milliseconds a poll that found jobs, but fewer than EXECUTION_BATCH_JOBS_MAX, keeps gathering the payments that come
 * due before it runs them: the wait of the batching window. A lone payment goes out this much later.
 */
export const EXECUTION_WINDOW_MS = 50;
/** Milliseconds between two looks at the queue inside the window. */
export const EXECUTION_WINDOW_POLL_MS = 10;
/** Seconds an idle poller waits before asking for jobs again; a full batch fetches again at once (decision 144). */
export const EXECUTION_IDLE_POLL_SECONDS = 0.5;
/**
 * Expired leases one recovery sweep takes over and resumes as one batch: a dead poller's whole batch, whose payments
 * then share on-chain transactions again. A full sweep sweeps again at once, so a dead process's batches all resume
 * within a sweep of their leases running out (decision 191).
 */
export const LEASE_SWEEP_LEASES_MAX = EXECUTION_BATCH_JOBS_MAX;
/** The largest execution batch: a poller's fetch or a sweep's takeovers. Bounds each step's lock hold and statements. */
export const EXECUTION_BATCH_MAX = Math.max(EXECUTION_BATCH_JOBS_MAX, LEASE_SWEEP_LEASES_MAX);
/** Attempts of one execution in all (spec: execution job retries); pg-boss re-runs a crashed run within the same budget. */
export const EXECUTION_ATTEMPTS_MAX = 3;
/** Runs of one attempt that may die holding the lease before it is abandoned: the same budget as pg-boss's runs. */
export const LEASE_TAKEOVERS_MAX = EXECUTION_ATTEMPTS_MAX;
/** Dead-letter jobs one poll fetches: a rare path, handled one at a time off the hot one. */
export const DEAD_LETTER_BATCH_JOBS_MAX = 1;
/** Seconds between looks at the dead-letter queue. */
export const DEAD_LETTER_IDLE_POLL_SECONDS = 2;
/**
 * A use case that asks the chain first and then locks re-checks what it decided from; when that changed in between
 * (another worker or an operator moved the payment), it starts over, at most this many times in all.
 */
export const RECHECK_ROUNDS_MAX = 3;

// --- Confirmation (src/core/payments/confirm) ------------------------------------------------------------------------

/** Open attempts loaded, and asked about, per page of a confirmation round. */
export const CONFIRMATION_PAGE_ATTEMPTS = 1000;
/** Verdicts written in one transaction at most. */
export const CONFIRMATION_WRITE_BATCH_MAX = 64;
/** Write transactions of one page in flight at once. */
export const CONFIRMATION_WRITE_LANES = 2;

// --- Group commits where independent HTTP requests meet (src/core/group-commits.ts, src/db/notify.ts) -----------

/** Creations in one reservation transaction: bounds the treasury row's lock hold and the statement sizes. */
export const RESERVATION_BATCH_MAX = 64;
/** Quotes written by one INSERT. */
export const QUOTE_WRITE_BATCH_MAX = 128;
/**
 * Items of one payout batch (POST /payout_batches): quoted together and reserved in one reservation transaction, so
 * its merchant's daily limit checks them together. Bounds that transaction's locks and statement sizes as
 * RESERVATION_BATCH_MAX bounds a group commit's.
 */
export const PAYOUT_BATCH_ITEMS_MAX = 1000;
/**
 * A payout batch's request body: its largest items (a 255-character key, a 128-character address per chain) times
 * PAYOUT_BATCH_ITEMS_MAX fit; anything bigger is refused unread with 413 PAYLOAD_TOO_LARGE.
 */
export const PAYOUT_BATCH_BODY_MAX_BYTES = 1024 * 1024;
/** API keys looked up by one query. */
export const KEY_LOOKUP_BATCH_MAX = 256;
/** Notices sent by one statement after their transactions committed. */
export const NOTICE_BATCH_MAX = 512;

// --- Webhooks (src/core/webhooks, src/workers/webhooks.ts, src/webhook-client) --------------------------------------

/** Events one delivery pass handles at most; each lane claims its share (decisions 75, 76). */
export const WEBHOOK_BATCH_EVENTS_MAX = 64;
/** Delivery lanes in flight at once, each on one pool connection with its claim. */
export const WEBHOOK_LANES = 4;
/** Full delivery passes run back to back before the loop yields to its timer. */
export const WEBHOOK_PASSES_PER_WAKE_MAX = 50;
/** Attempts of one webhook event: the first plus the 5 retries the spec allows (schedule: src/domain/webhook-delivery.ts). */
export const WEBHOOK_ATTEMPTS_MAX = 6;
/** Margin over the POSTs' timeouts for a delivery transaction's idle limit: it sits idle while they run. */
export const WEBHOOK_IDLE_IN_TRANSACTION_MARGIN_MS = 30_000;
/** Margin over the POST timeout that stopping the webhook worker waits for its pass in flight. */
export const WEBHOOK_STOP_MARGIN_MS = 5_000;
/** A receiver's answer body is read (for the connection's sake) up to this size; past it the connection is dropped. */
export const WEBHOOK_ANSWER_BODY_MAX_BYTES = 64 * 1024;
/** Operator alert notifications sent per pass: the rest wait for the next pass. */
export const ALERT_DELIVERIES_PER_PASS_MAX = 20;

// --- Chains (src/chains) ------------------------------------------------------------------------------------------

/** Transfers whose statuses are read in one round of Ethereum JSON-RPC batches, and the most calls in one batch. */
export const ETHEREUM_RPC_BATCH_REQUESTS_MAX = 100;
/** Signatures in one Solana getSignatureStatuses call (the node's limit). */
export const SOLANA_STATUS_SIGNATURES_PER_CALL_MAX = 256;
/** getSignaturesForAddress's largest page. */
export const SOLANA_SIGNATURE_PAGE_SIGNATURES = 1000;
/** Signature pages listed per address per inbound scan, walking down a backlog. */
export const SOLANA_SIGNATURE_PAGES_PER_SCAN_MAX = 10;
/** Signatures of one address in a window: what an inbound scan lists once the walk down is done. */
export const SOLANA_WINDOW_SIGNATURES = 100;
/** Transactions read per inbound scan (one getTransaction each, failed ones excepted): both addresses' windows. */
export const SOLANA_SCAN_TRANSACTIONS_MAX = 2 * SOLANA_WINDOW_SIGNATURES;
/** getTransaction calls of a scan in flight at once. */
export const SOLANA_SCAN_TRANSACTIONS_IN_FLIGHT = 10;
/** Walk marks kept per address: the scan position stays a few kilobytes whatever the backlog. */
export const SOLANA_SCAN_MARKS_MAX = 100;
/**
 * Payouts one Solana transaction pays at most (an on-chain batch, issue 28). Below what a packet holds (about 19
 * transfers to existing token accounts): a transaction fails as a whole, so a cap also bounds how many payouts one bad
 * transfer takes down with it.
 */
export const SOLANA_BATCH_TRANSFERS_MAX = 16;
/**
 * Bytes of a serialized legacy or v0 Solana transaction, signatures included: the IPv6 minimum MTU (1280) less the
 * IPv6 (40) and fragment (8) headers, so that a transaction travels in one UDP packet. Validators refuse anything bigger.
 */
export const SOLANA_TRANSACTION_BYTES_MAX = 1280 - 40 - 8;
/** Compute units one Solana transaction may request (the runtime's cap). */
export const SOLANA_TRANSACTION_COMPUTE_UNITS_MAX = 1_400_000;
/** Accounts in one getMultipleAccounts call (the node's limit): two per payout (the wallet and its token account). */
export const SOLANA_ACCOUNTS_PER_CALL_MAX = 100;
/** Transfers the deposit scanner reads per call of the simulated chain (bounded, like an RPC page). */
export const SIMULATED_INBOUND_PAGE_TRANSFERS = 200;
/**
 * Payouts one simulated transaction pays at most (an on-chain batch, issue 28): the payments of one chain that an
 * execution batch prepares together go out in transactions of up to this many. Each further payout of a batch costs the
 * simulated chain SIMULATED_BATCH_TRANSFER_FEE_PERCENT of a transaction of its own.
 */
export const SIMULATED_BATCH_TRANSFERS_MAX = 16;
export const SIMULATED_BATCH_TRANSFER_FEE_PERCENT = 30n;
/**
 * Payouts one EVM transaction pays at most through the batch-transfer contract (NAME_BATCH_CONTRACT): about 30k gas
 * each to a new holder, so a full batch stays near 3M gas, far inside a block.
 */
export const EVM_BATCH_TRANSFERS_MAX = 100;
/** Transfers in flight asked about per getStatuses call of a reconciliation (adapters split further as needed). */
export const RECONCILE_STATUS_PAGE_TRANSFERS = 1000;
/** Readings of the opening balances tried between two equal deposit positions before the last one is taken. */
export const TREASURY_SNAPSHOT_TRIES_MAX = 5;

// --- Books behind the chain (issue 36: src/core/treasury/books, decisions 198-200) -----------------------------------

/**
 * Tx ids of the attempts the books hold as landed, newest first, that a check after a change of database history
 * hands the adapter: its walk back stops at the first it finds (a few, in case the newest was dropped by a reorg).
 */
export const BOOKS_CHECK_LANDED_TXS = 16;
/** Signature pages a Solana check walks back at most before it calls itself incomplete (a chain held for an operator). */
export const SOLANA_BOOKS_CHECK_PAGES_MAX = 10;
/** Blocks a Solana blockhash stays usable (agave MAX_PROCESSING_AGE): past it, nothing signed on it can land. */
export const SOLANA_BLOCKHASH_LIFETIME_BLOCKS = 150n;
/** EVM blocks a check reads Transfer logs back over when the books know no landed transaction to start from. */
export const EVM_BOOKS_CHECK_LOOKBACK_BLOCKS = 100_000n;
/** Blocks per eth_getLogs call of a check (what public nodes commonly allow). */
export const EVM_LOG_RANGE_BLOCKS = 10_000n;
/** Nonces the chain used beyond the books that one check lists; more are reported as an incomplete check. */
export const BOOKS_CHECK_NONCES_MAX = 1_000;
/** Unknown transactions one hold's findings keep (the alert and the operator's view); more make the check incomplete. */
export const BOOKS_CHECK_FINDINGS_MAX = 500;
/** Seconds a payment whose chain is held waits before its execution looks again (a job of the same attempt). */
export const BOOKS_HOLD_RECHECK_SECONDS = 5;

// --- Database (src/db) --------------------------------------------------------------------------------------------

/** Connections of a process that runs one role (`api`, `worker`). */
export const DB_POOL_CONNECTIONS = 20;
/** `serve`: the api's connections and the workers', kept apart (decision 143). */
export const DB_SERVE_API_POOL_CONNECTIONS = 12;
export const DB_SERVE_WORKER_POOL_CONNECTIONS = 16;
/** Connections to DATABASE_READ_URL (console lists, exports, metrics gauges: a few operators and one scraper). */
export const DB_READ_POOL_CONNECTIONS = 4;
/** pg-boss's own connections. */
export const QUEUE_POOL_CONNECTIONS = 4;
/** Waits for a free connection, a statement, and a transaction left idle: a stuck database surfaces as an error. */
export const DB_CONNECT_TIMEOUT_MS = 10_000;
/**
 * With several hosts in DATABASE_URL: how long one host may take to connect and answer before the next one is tried
 * (libpq's connect_timeout is per host too). Short against DB_CONNECT_TIMEOUT_MS, so a lost machine that swallows
 * connects leaves time for the next host within one connection's wait.
 */
export const DB_HOST_CONNECT_TIMEOUT_MS = 3_000;
export const DB_STATEMENT_TIMEOUT_MS = 30_000;
export const DB_IDLE_IN_TRANSACTION_TIMEOUT_MS = 60_000;
/** Tries of a transaction that hit a deadlock or a serialization failure. */
export const DB_TRANSACTION_TRIES_MAX = 3;
/** Statements each connection keeps prepared: beyond it, new texts run unprepared (a bound on server memory). */
export const DB_PREPARED_STATEMENTS_MAX = 1_000;
/** Entries the quote facts cache keeps per topic (one per merchant for policies): beyond it the topic starts afresh. */
export const NOTICE_CACHE_ENTRIES_MAX = 10_000;
/** How long closing a LISTEN connection may take. */
export const LISTEN_END_TIMEOUT_MS = 5_000;
/**
 * Waits between LISTEN reconnection attempts, doubling from the first to the cap. The cap is short: an attempt costs
 * one refused connection, and a listener held back by a long backoff would miss notices for that long after the
 * database is back (caches bypassed, the console's live view silent).
 */
export const LISTEN_RECONNECT_MIN_MS = 500;
export const LISTEN_RECONNECT_MAX_MS = 5_000;
/** The embedded server: how long an orphan's stop, a restart's backoff and attaching to another owner's may take. */
export const EMBEDDED_ORPHAN_STOP_TIMEOUT_MS = 30_000;
export const EMBEDDED_RESTART_MIN_MS = 500;
export const EMBEDDED_RESTART_MAX_MS = 10_000;
export const EMBEDDED_ATTACH_TIMEOUT_MS = 120_000;
/** How long stopping the queue waits for its in-flight work. */
export const QUEUE_STOP_TIMEOUT_MS = 30_000;

// --- Loops, pages and reads (src/workers, src/core, src/api) ------------------------------------------------------

/**
 * After failed ticks a periodic loop waits twice as long each time, from its period up to this (or its period, when
 * longer): a fast loop in an outage neither hammers the database nor floods the log, and is back within this of the
 * recovery.
 */
export const PERIODIC_FAILURE_BACKOFF_MAX_MS = 5_000;
/** A scrape's database read slower than this is not waited for. */
export const METRICS_READ_TIMEOUT_MS = 5_000;
/** Records an audit-chain proof reads at once. */
export const AUDIT_VERIFY_PAGE_ROWS = 1000;
/** Nesting of an audit record's details kept; deeper values are stored as '[too deep]' (a body of any depth is storable). */
export const AUDIT_DETAILS_DEPTH_MAX = 16;
/** Problems a ledger check reports at most: enough to act on, bounded output. */
export const LEDGER_VERIFY_PROBLEMS_MAX = 100;
/**
 * Characters of a timestamp an admin query takes: an ISO 8601 date-time with nanoseconds and an offset is 35; the
 * format alone would let a fraction run on for the whole URL.
 */
export const ADMIN_TIMESTAMP_CHARS_MAX = 64;
/** Rows of an admin list page, by default and at most. */
export const ADMIN_PAGE_ROWS_DEFAULT = 50;
export const ADMIN_PAGE_ROWS_MAX = 200;
/** Points of a chain's health chart: by default about an hour at the default 15 s collection period, and at most. */
export const ADMIN_HEALTH_HISTORY_POINTS_DEFAULT = 240;
export const ADMIN_HEALTH_HISTORY_POINTS_MAX = 2000;
/** The admin overview's recent payments and deposits. */
export const ADMIN_RECENT_PAYMENTS = 20;
export const ADMIN_RECENT_DEPOSITS = 10;
/** Open server-sent event streams per process; more are refused with 503 rather than exhausting sockets. */
export const ADMIN_EVENT_STREAMS_MAX = 100;
/** Unsent bytes a stream may pile up (a client that stopped reading) before it is ended, to reconnect and re-read. */
export const ADMIN_EVENT_BUFFERED_BYTES_MAX = 1_000_000;
/** Keys whose last use this process remembers writing (a forgotten one costs one extra conditional write). */
export const KEY_USE_CACHE_ENTRIES_MAX = 10_000;
/**
 * Client addresses one process counts /health requests of (decision 217): past it, the windows that ended are
 * dropped, then the oldest, so a flood from many addresses costs bounded memory and at worst restarts a count.
 */
export const HEALTH_RATE_LIMIT_ADDRESSES_MAX = 10_000;

// --- The API document (src/api/openapi) -------------------------------------------------------------------------

/** Characters of one path parameter the router takes (Fastify's maxParamLength); longer ones are answered 414. */
export const ROUTE_PARAM_CHARS_MAX = 256;
/**
 * The document's bound on a string no route schema bounds more tightly: no body the service takes is larger, so no
 * string it accepts, stores and answers back is longer, and what it reads from chains and webhooks is capped smaller.
 */
export const OPENAPI_TEXT_CHARS_MAX = PAYOUT_BATCH_BODY_MAX_BYTES;
/**
 * The document's bound on a list no route schema bounds more tightly: pages hold ADMIN_PAGE_ROWS_MAX rows, a batch
 * PAYOUT_BATCH_ITEMS_MAX items, a health chart ADMIN_HEALTH_HISTORY_POINTS_MAX points; the unpaged lists (operators,
 * an address book, approvals waiting) stay far below it in any sane deployment.
 */
export const OPENAPI_LIST_ITEMS_MAX = 10_000;

// --- Exports (src/core/exports) -------------------------------------------------------------------------------------

/** Payments per statement of a payments export: about 300 KB of CSV, a few milliseconds of index scan (decision 157). */
export const EXPORT_PAYMENT_PAGE_ROWS = 1000;
/** Ledger transactions per statement of a ledger export (two postings each): the same order of size as a payments page. */
export const EXPORT_LEDGER_WINDOW_TRANSACTIONS = 500;
/**
 * Exports one process streams at once: each reads its pages one after another on the shared pool, so four use at most
 * four of its connections; the next gets `503 SERVICE_UNAVAILABLE` and retries.
 */
export const EXPORTS_AT_ONCE_MAX = 4;

/** `stableroute devnet --chains`: at most this many EVM chains beside ethereum and solana, each an anvil process. */
export const DEVNET_EXTRA_CHAINS_MAX = 8;

// --- Screening (src/core/screening) ----------------------------------------------------------------------------------

/** How often each process stats the list file, in case the directory watch missed a change (network file systems). */
export const SCREENING_LIST_CHECK_MS = 1000;
/** The largest list file read: about 11 million EVM addresses; a larger file keeps the last good list and logs. */
export const SCREENING_LIST_FILE_BYTES_MAX = 512 * 1024 * 1024;
/** The provider's answers one process remembers; the oldest is forgotten first. */
export const SCREENING_CACHE_ENTRIES_MAX = 10_000;
/** How long the provider's `allow` is trusted at quote time before the address is asked about again (never before signing). */
export const SCREENING_ALLOW_CACHE_SECONDS = 300;
/** How long its `deny` is remembered: shorter, so a provider's correction is seen soon; a deny costs a refusal, not money. */
export const SCREENING_DENY_CACHE_SECONDS = 60;
/**
 * Requests to the provider one screening (one quote, payout batch, withdrawal or execution batch) has in flight at
 * once; its distinct addresses wait their turn. A payout batch of PAYOUT_BATCH_ITEMS_MAX items asks at most once per
 * distinct well-formed address (malformed ones are refused before screening), this many at a time.
 */
export const SCREENING_PROVIDER_REQUESTS_AT_ONCE_MAX = 8;
/**
 * How long one operator's request to force a replacement that screening refuses waits for a different operator's
 * (decision 184); after it, the next force is a new request.
 */
export const SCREENING_OVERRIDE_SECONDS = 3600;
/** The provider's answer read at most: `{"decision":"allow"}` needs a few bytes; more is a malformed answer. */
export const SCREENING_ANSWER_BYTES_MAX = 4096;

// --- Traces (src/tracing) -------------------------------------------------------------------------------------------

/** How long finished spans wait to be exported together (OTEL_BSP_SCHEDULE_DELAY overrides it). */
export const TRACE_EXPORT_DELAY_MS = 2000;
/** One OTLP export request may take this long; a collector that does not answer costs spans, never a request. */
export const TRACE_EXPORT_TIMEOUT_MS = 10_000;
/** Finished spans kept while the collector is slow or away; more are dropped, not queued without end. */
export const TRACE_QUEUE_SPANS_MAX = 4096;
