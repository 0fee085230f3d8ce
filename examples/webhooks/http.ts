// The HTTP plumbing both example receivers share: the raw body (signatures cover the exact bytes, so never parse
// before verifying), bounded in size, and JSON answers.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { pathToFileURL } from 'node:url';

/** Stableroute's bodies are a few hundred bytes; anything near this is not one of them. */
export const MAX_BODY_BYTES = 256 * 1024;

/** The stableroute event in the body (spec: Events). */
export interface StablerouteEvent {
  event_type: string;
  payment_intent_id: string | null;
  merchant_id: string;
  payload: Record<string, unknown>;
}

/** The exact body bytes, or null once the body grows past `maxBytes`. */
export async function readBody(request: IncomingMessage, maxBytes = MAX_BODY_BYTES): Promise<Buffer | null> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    size += (chunk as Buffer).length;
    if (size > maxBytes) return null;
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

export function header(request: IncomingMessage, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

export function answer(response: ServerResponse, status: number, body: Record<string, unknown>): void {
  response.writeHead(status, { 'content-type': 'application/json' });
  response.end(JSON.stringify(body));
}

/** Whether this module is the program being run (`node --import tsx examples/webhooks/<file>.ts`). */
export function isMain(moduleUrl: string): boolean {
  const script = process.argv[1];
  return script !== undefined && moduleUrl === pathToFileURL(script).href;
}
