// Each JSON-RPC request of the Ethereum and Solana transports is a client span while traces are on: its method and its
// chain, a child of the span it was sent in, and nothing of its params (an address here; a signed transaction in use).
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEthereumRpc } from '../../src/chains/ethereum/rpc.js';
import { call, createRpcClient } from '../../src/chains/solana/rpc.js';
import { installTracer, parseTraceparent, tracer, type Tracer } from '../../src/tracing/tracer.js';

const ETH_ADDRESS = '0x52908400098527886E0F7030069857D2E4169EE7';
const SOL_ADDRESS = '9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM';

/** Answers every JSON-RPC request (or batch) with a result its method's caller can parse. */
function answer(request: { id: number; method: string }) {
  const results: Record<string, unknown> = { eth_blockNumber: '0x10', eth_getBalance: '0x0', getSlot: 7, getBalance: { context: { slot: 7 }, value: 0 } };
  return { jsonrpc: '2.0', id: request.id, result: results[request.method] ?? null };
}

let node: Server;
let url: string;
beforeAll(async () => {
  node = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { id: number; method: string } | { id: number; method: string }[];
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(Array.isArray(body) ? body.map(answer) : answer(body)));
    });
  });
  await new Promise<void>((resolve) => node.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(node.address() as AddressInfo).port}`;
});
afterAll(async () => new Promise<void>((resolve) => node.close(() => resolve())));

describe('without traces', () => {
  it('the transports answer as before and start no span', async () => {
    expect(tracer().enabled).toBe(false);
    expect(await createEthereumRpc(url, 5, { chain: 'base' }).getBlockNumber()).toBe(16n);
    expect(await call(createRpcClient(url, 5), 'slot', createRpcClient(url, 5).rpc.getSlot())).toBe(7n);
  });
});

describe('with traces', () => {
  let t: Tracer;
  let uninstall: () => void;
  const finished: ReadableSpan[] = [];
  beforeAll(async () => {
    const { createOtelTracer } = await import('../../src/tracing/otel.js');
    const exporter: SpanExporter = {
      export: (spans, done) => {
        finished.push(...spans);
        done({ code: 0 });
      },
      shutdown: async () => undefined,
    };
    t = createOtelTracer({ serviceName: 'test', sampler: { name: 'always_on', ratio: 1 }, exportDelayMs: 10 }, { exporter });
    uninstall = installTracer(t);
  });
  afterAll(async () => {
    uninstall();
    await t.shutdown();
  });

  it('gives each request a span with its method and chain, child of the span it was sent in, without its params', async () => {
    const parent = await t.inSpan('confirmation round', { parent: null }, async () => {
      const eth = createEthereumRpc(url, 5, { chain: 'base' });
      await eth.getBlockNumber();
      await eth.getBalance({ address: ETH_ADDRESS });
      const solana = createRpcClient(url, 5);
      await call(solana, 'balance', solana.rpc.getBalance(SOL_ADDRESS as never));
      return t.current()!;
    });
    await t.shutdown();
    const round = parseTraceparent(parent)!;
    const rpc = finished.filter((s) => s.parentSpanContext?.spanId === round.spanId);
    expect(rpc.map((s) => [s.name, s.attributes['rpc.method'], s.attributes['stableroute.chain'], s.kind])).toEqual([
      ['eth_blockNumber', 'eth_blockNumber', 'base', 2],
      ['eth_getBalance', 'eth_getBalance', 'base', 2],
      ['getBalance', 'getBalance', 'solana', 2],
    ]);
    expect(rpc.every((s) => s.spanContext().traceId === round.traceId)).toBe(true);
    const exported = JSON.stringify(finished.map((s) => s.attributes));
    expect(exported).not.toContain(ETH_ADDRESS.slice(2, 12).toLowerCase());
    expect(exported).not.toContain(SOL_ADDRESS);
  });
});
