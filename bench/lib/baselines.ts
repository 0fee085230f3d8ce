// What this machine can do at best, measured in the same run as the service: the reservation-shaped transaction on
// one hot row straight to PostgreSQL (pgbench when installed, else a pg pool), and a Fastify hello-world under the
// same load generator as the service.
import { execFile, spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { promisify } from 'node:util';
import pg from 'pg';
import { closedLoop, round, send, type LoadResult } from './load.js';
import { freePort } from '../../test/helpers/process.js';

const run = promisify(execFile);

const SCHEMA = `
  CREATE TABLE bench_balance (id int PRIMARY KEY, balance bigint NOT NULL);
  CREATE TABLE bench_intents (id bigserial PRIMARY KEY, amount bigint NOT NULL, created_at timestamptz NOT NULL DEFAULT now());
  CREATE TABLE bench_postings (id bigserial PRIMARY KEY, intent_id bigint NOT NULL, amount bigint NOT NULL);
  INSERT INTO bench_balance VALUES (1, 9000000000000000000);`;

/** The shape of a reservation: lock the chain's one balance row, check, write the intent, the posting, the balance. */
const RESERVATION = `BEGIN;
SELECT balance FROM bench_balance WHERE id = 1 FOR UPDATE;
INSERT INTO bench_intents (amount) VALUES (1250000) RETURNING id \\gset
INSERT INTO bench_postings (intent_id, amount) VALUES (:id, 1250000);
UPDATE bench_balance SET balance = balance - 1250000 WHERE id = 1;
COMMIT;
`;

async function hasPgbench(): Promise<boolean> {
  return run('pgbench', ['--version']).then(() => true, () => false);
}

export async function reservationBaseline(url: string, clients: number, seconds: number): Promise<{ tps: number; tool: string }> {
  const setup = new pg.Client({ connectionString: url });
  await setup.connect();
  await setup.query(SCHEMA);
  await setup.end();
  if (await hasPgbench()) {
    const dir = await mkdtemp(join(tmpdir(), 'sr-pgbench-'));
    try {
      const script = join(dir, 'reserve.sql');
      await writeFile(script, RESERVATION);
      const { stdout } = await run('pgbench', ['-n', '-c', String(clients), '-j', '2', '-T', String(seconds), '-f', script, url]);
      const tps = Number(/tps = ([\d.]+)/.exec(stdout)?.[1] ?? 0);
      return { tps: round(tps, 0), tool: 'pgbench' };
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }
  const pool = new pg.Pool({ connectionString: url, max: clients });
  let done = 0;
  const deadline = performance.now() + seconds * 1000;
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (performance.now() < deadline) {
        const client = await pool.connect();
        try {
          await client.query('BEGIN');
          await client.query('SELECT balance FROM bench_balance WHERE id = 1 FOR UPDATE');
          const { rows } = await client.query<{ id: string }>('INSERT INTO bench_intents (amount) VALUES (1250000) RETURNING id');
          await client.query('INSERT INTO bench_postings (intent_id, amount) VALUES ($1, 1250000)', [rows[0]!.id]);
          await client.query('UPDATE bench_balance SET balance = balance - 1250000 WHERE id = 1');
          await client.query('COMMIT');
          done++;
        } finally {
          client.release();
        }
      }
    }),
  );
  await pool.end();
  return { tps: round(done / seconds, 0), tool: 'pg pool' };
}

const HELLO = `
import Fastify from 'fastify';
const app = Fastify({ logger: false });
app.get('/', async () => ({ hello: 'world' }));
await app.listen({ port: Number(process.env.PORT), host: '127.0.0.1' });
process.stdout.write('ready\\n');
`;

/** A Fastify hello-world in its own process, under the same load generator and concurrency. */
export async function helloWorldBaseline(concurrency: number, seconds: number): Promise<LoadResult> {
  const port = await freePort();
  const child = spawn(process.execPath, ['--input-type=module', '-e', HELLO], {
    env: { ...process.env, PORT: String(port) },
    cwd: new URL('../..', import.meta.url).pathname,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (c: Buffer) => c.toString().includes('ready') && resolve());
    child.once('exit', () => reject(new Error('hello-world exited')));
  });
  try {
    return await closedLoop('fastify hello-world', concurrency, seconds, async () => (await send('GET', `http://127.0.0.1:${port}/`)).status === 200);
  } finally {
    child.kill('SIGTERM');
  }
}
