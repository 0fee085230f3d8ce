// JSON-RPC 2.0 over HTTP (node:http, no framework): POST a request or a batch, get the answer. GET /health answers
// "ok" like a validator's RPC port. Handlers run synchronously, one request at a time, so the chain needs no locks.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import type { Methods } from './common.js';
import {
  RPC_INTERNAL_ERROR,
  RPC_INVALID_REQUEST,
  RPC_METHOD_NOT_FOUND,
  RPC_PARSE_ERROR,
  RpcError,
  toJson,
} from './json.js';

const BODY_MAX_BYTES = 256 * 1024;
const BATCH_MAX = 100;

type Id = string | number | null;

export function createRpcServer(methods: Methods, logger?: Pick<Logger, 'debug' | 'error'>): Server {
  const failure = (id: Id, error: unknown): string => {
    if (error instanceof RpcError) return errorJson(id, error.code, error.message, error.data);
    logger?.error({ err: error }, 'solana devnet rpc handler failed');
    return errorJson(id, RPC_INTERNAL_ERROR, 'Internal error');
  };

  // Standard methods answer synchronously, so a batch of them sees one state of the chain. A devnet-only method may
  // answer with a promise (it derives addresses first); it touches the chain only after its last await, in one
  // synchronous step, so no other request sees it half done.
  const answer = (request: unknown): string | Promise<string> => {
    const id = idOf(request);
    try {
      if (typeof request !== 'object' || request === null || Array.isArray(request)) {
        throw new RpcError(RPC_INVALID_REQUEST, 'Invalid request');
      }
      const { jsonrpc, method, params } = request as Record<string, unknown>;
      if (jsonrpc !== '2.0' || typeof method !== 'string') throw new RpcError(RPC_INVALID_REQUEST, 'Invalid request');
      if (params !== undefined && !Array.isArray(params)) throw new RpcError(RPC_INVALID_REQUEST, 'Invalid request');
      const handler = Object.hasOwn(methods, method) ? methods[method] : undefined;
      if (!handler) throw new RpcError(RPC_METHOD_NOT_FOUND, 'Method not found');
      logger?.debug({ method }, 'solana devnet rpc');
      const result = handler(params ?? []);
      if (result instanceof Promise) {
        return result.then(
          (value: unknown) => toJson({ jsonrpc: '2.0', result: value, id }),
          (error: unknown) => failure(id, error),
        );
      }
      return toJson({ jsonrpc: '2.0', result, id });
    } catch (error) {
      return failure(id, error);
    }
  };

  const handle = (req: IncomingMessage, res: ServerResponse, body: string) => {
    let parsed: unknown;
    try {
      parsed = JSON.parse(body);
    } catch {
      return reply(res, 200, errorJson(null, RPC_PARSE_ERROR, 'Parse error'));
    }
    if (!Array.isArray(parsed)) {
      const single = answer(parsed);
      if (typeof single === 'string') return reply(res, 200, single);
      return void single.then((body) => reply(res, 200, body));
    }
    if (parsed.length === 0 || parsed.length > BATCH_MAX) {
      return reply(res, 200, errorJson(null, RPC_INVALID_REQUEST, 'Invalid request'));
    }
    const answers = parsed.map(answer);
    if (answers.every((a): a is string => typeof a === 'string')) return reply(res, 200, `[${answers.join(',')}]`);
    return void Promise.all(answers).then((bodies) => reply(res, 200, `[${bodies.join(',')}]`));
  };

  return createServer((req, res) => {
    if (req.method === 'GET' && req.url === '/health') return reply(res, 200, 'ok', 'text/plain');
    if (req.method !== 'POST') return reply(res, 405, 'HTTP method not allowed: POST is required', 'text/plain');
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > BODY_MAX_BYTES) {
        reply(res, 413, 'Payload Too Large', 'text/plain');
        req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => {
      if (!res.headersSent) handle(req, res, Buffer.concat(chunks).toString('utf8'));
    });
  });
}

function idOf(request: unknown): Id {
  if (typeof request !== 'object' || request === null) return null;
  const id = (request as { id?: unknown }).id;
  return typeof id === 'string' || typeof id === 'number' ? id : null;
}

function errorJson(id: Id, code: number, message: string, data?: unknown): string {
  return toJson({ jsonrpc: '2.0', error: { code, message, ...(data === undefined ? {} : { data }) }, id });
}

function reply(res: ServerResponse, status: number, body: string, contentType = 'application/json'): void {
  res.writeHead(status, { 'content-type': contentType, 'content-length': Buffer.byteLength(body) });
  res.end(body);
}
