// Requests that Node's HTTP parser refuses never reach a route or the error handler: bad framing (a Content-Length
// with chunked encoding, a bare LF, invalid header characters), headers over 16 KiB, a client too slow to send its
// request. They still answer in the spec's error body, with a code, like every other error (decision 84).
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyBaseLogger } from 'fastify';
import type { ErrorCode } from '../domain/errors.js';
import { errorBody } from './errors.js';

interface ClientErrorAnswer {
  status: number;
  code: ErrorCode;
  message: string;
}

/** What answers a parser error. The parser's own text is not echoed: it can quote bytes of the request. */
export function clientErrorAnswer(error: NodeJS.ErrnoException): ClientErrorAnswer {
  if (error.code === 'HPE_HEADER_OVERFLOW') {
    return { status: 431, code: 'HEADERS_TOO_LARGE', message: 'The request headers are larger than 16 KiB' };
  }
  if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
    return { status: 408, code: 'REQUEST_TIMEOUT', message: 'The request was not received in time' };
  }
  return { status: 400, code: 'MALFORMED_REQUEST', message: 'The HTTP request could not be parsed (framing or header syntax)' };
}

/** Fastify's clientErrorHandler: the answer above, then the connection is closed (its framing cannot be trusted). */
export function handleClientError(this: { log: FastifyBaseLogger }, error: NodeJS.ErrnoException, socket: Socket): void {
  // A reset or a closed socket has nobody left to answer.
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const answer = clientErrorAnswer(error);
  this.log.debug({ err_code: error.code, status: answer.status }, 'http parser refused a request');
  if (socket.writable) {
    const body = JSON.stringify(errorBody(answer.status, answer.code, answer.message));
    socket.write(
      `HTTP/1.1 ${answer.status} ${STATUS_CODES[answer.status]}\r\nConnection: close\r\nContent-Type: application/json; charset=utf-8\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
  }
  socket.destroy(error);
}
