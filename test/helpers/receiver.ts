// A real HTTP webhook receiver on loopback that checks the spec's signature on every delivery.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { verifySignature } from '../../src/webhook-client/signature.js';

export interface ReceivedEvent {
  id: string;
  event_type: string;
  payment_intent_id: string | null;
  merchant_id: string;
  payload: Record<string, unknown>;
}

export interface Receiver {
  url: string;
  events: ReceivedEvent[];
  badSignatures: number;
  close(): Promise<void>;
}

export async function startReceiver(secret: string): Promise<Receiver> {
  const receiver: Receiver = { url: '', events: [], badSignatures: 0, close: async () => undefined };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const signature = String(req.headers['x-stableroute-signature'] ?? '');
      if (!verifySignature(secret, body, signature)) {
        receiver.badSignatures++;
        res.statusCode = 400;
        return res.end();
      }
      receiver.events.push({ id: String(req.headers['webhook-id']), ...JSON.parse(body.toString('utf8')) });
      res.statusCode = 204;
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
  receiver.close = () => new Promise((resolve) => server.close(() => resolve()));
  return receiver;
}
