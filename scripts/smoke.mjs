#!/usr/bin/env node
// The quickstart, as a new user runs it, on whatever Node runs this script (.ci/run: the machine's own): `npm start`
// with DATABASE_URL (a fresh database of that server, dropped after) or, unset, embedded PostgreSQL in a temporary
// directory; one payment quoted, created and settled through the HTTP API with the development key; then SIGTERM to
// the process group, as a terminal or a container stop sends it (npm does not pass SIGTERM on to the script), and the
// service must log `stopped`, with no error, and be gone within the deadline. Plain JavaScript: nothing to compile.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const START_DEADLINE_MS = 180_000; // embedded PostgreSQL's first initdb on a loaded machine
const SETTLE_DEADLINE_MS = 60_000;
const STOP_DEADLINE_MS = 45_000;
const POLL_MS = 250;
const API_KEY = 'dev';
const SOLANA_ADDRESS = '9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM';

const say = (line) => process.stdout.write(`smoke: ${line}\n`);
const delay = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** A port nothing listens on now. */
function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
    server.on('error', reject);
  });
}

/** Polls `check` until it returns a value other than undefined, or fails with `what` at the deadline. */
async function waitFor(what, deadlineMs, check) {
  const deadline = Date.now() + deadlineMs;
  for (;;) {
    const value = await check().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${deadlineMs} ms`);
    await delay(POLL_MS);
  }
}

async function call(base, method, path, body) {
  const response = await fetch(`${base}${path}`, {
    method,
    headers: { 'x-api-key': API_KEY, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(10_000),
  });
  const text = await response.text();
  return { status: response.status, body: text === '' ? null : JSON.parse(text) };
}

function expectStatus(what, response, status) {
  if (response.status !== status) throw new Error(`${what}: ${response.status} ${JSON.stringify(response.body)}`);
  return response.body;
}

/** The service's JSON log records so far. */
function records(output) {
  return output.join('').split('\n').flatMap((line) => {
    try {
      return line.startsWith('{') ? [JSON.parse(line)] : [];
    } catch {
      return []; // a record split across chunks, still arriving
    }
  });
}

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** The server database URL with another database name. */
function withDatabase(url, name) {
  const parsed = new URL(url);
  parsed.pathname = `/${name}`;
  return parsed.toString();
}

async function dropDatabase(serverUrl, name) {
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    await client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  } finally {
    await client.end();
  }
}

async function main() {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const serverUrl = process.env.DATABASE_URL;
  const database = `stableroute_smoke_${process.pid}`;
  const dataDir = serverUrl ? null : mkdtempSync(join(tmpdir(), 'stableroute-smoke-'));
  const env = {
    ...process.env,
    NODE_ENV: 'development',
    PORT: String(port),
    HOST: '127.0.0.1',
    LOG_FORMAT: 'json',
    SIM_CONFIRM_SECONDS: '1',
    ...(serverUrl ? { DATABASE_URL: withDatabase(serverUrl, database) } : { DATA_DIR: dataDir }),
  };
  delete env.ADMIN_PORT;
  say(`node ${process.version}; npm start on port ${port} with ${serverUrl ? `database ${database}` : `embedded PostgreSQL in ${dataDir}`}`);
  // Its own process group: whatever happens here, nothing it started outlives the smoke.
  const server = spawn('npm', ['start'], { env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  const output = [];
  for (const stream of [server.stdout, server.stderr]) stream.on('data', (chunk) => output.push(chunk.toString()));
  const exited = new Promise((resolve) => server.on('exit', (code, signal) => resolve({ code, signal })));
  let stopped = false;
  try {
    await waitFor('GET /health answers 200', START_DEADLINE_MS, async () => {
      if (server.exitCode !== null) throw new Error(`npm start exited with ${server.exitCode}`);
      return (await fetch(`${base}/health`)).status === 200 ? true : undefined;
    });
    say('ready');
    const quote = expectStatus('POST /quotes', await call(base, 'POST', '/quotes', {
      amount_usd: 25,
      destination: { solana_address: SOLANA_ADDRESS },
      priority: 'fast',
    }), 201);
    const intent = expectStatus('POST /payment_intents', await call(base, 'POST', '/payment_intents', {
      quote_id: quote.quote_id,
      idempotency_key: `smoke-${process.pid}`,
    }), 201);
    say(`payment ${intent.payment_intent_id} created on ${intent.selected_chain}`);
    const settled = await waitFor(`payment ${intent.payment_intent_id} settled`, SETTLE_DEADLINE_MS, async () => {
      const { status, body } = await call(base, 'GET', `/payment_intents/${intent.payment_intent_id}`);
      if (status === 200 && ['failed', 'manual_review', 'cancelled', 'expired'].includes(body.status)) {
        throw new Error(`payment ended ${body.status}`);
      }
      return status === 200 && body.status === 'settled' ? body : undefined;
    });
    say(`payment settled (${settled.status})`);
    const service = records(output).find((r) => r.msg?.startsWith('stableroute ready'))?.pid;
    if (typeof service !== 'number') throw new Error('no "stableroute ready" record with the service\'s pid');
    process.kill(-server.pid, 'SIGTERM');
    await waitFor(`service (pid ${service}) gone after SIGTERM`, STOP_DEADLINE_MS, async () => (alive(service) ? undefined : true));
    stopped = true;
    const after = records(output);
    const failures = after.filter((r) => r.level >= 50).map((r) => r.msg);
    if (failures.length > 0) throw new Error(`errors logged: ${failures.join('; ')}`);
    if (!after.some((r) => r.msg === 'stopped')) throw new Error('the service ended without logging "stopped"');
    say('stopped cleanly on SIGTERM');
  } catch (error) {
    process.stderr.write(`smoke: FAILED: ${error.message}\n--- service output (last 60 lines) ---\n`);
    process.stderr.write(`${output.join('').split('\n').slice(-60).join('\n')}\n`);
    process.exitCode = 1;
  } finally {
    if (!stopped) {
      try {
        process.kill(-server.pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    await exited;
    if (serverUrl) await dropDatabase(serverUrl, database).catch((error) => say(`could not drop ${database}: ${error.message}`));
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();
