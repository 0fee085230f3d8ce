// A screening provider on loopback, as an operator's vendor would run it: it checks the Standard Webhooks signature
// (and the spec's hex one) of every request with the shared secret, and answers what the test set for the address:
// allow, deny, nothing at all (a hang, to run out the timeout), a 500, or a body that is not an answer. A test can hold
// every answer until it lets them go (`hold`), and read how many requests were in flight at once.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { signingKeys } from '../../src/webhook-client/secret.js';
import { verifySignature, verifyStandardWebhook } from '../../src/webhook-client/signature.js';

export type ProviderAnswer = 'allow' | 'deny' | 'hang' | 'error' | 'garbage';

export interface ScreeningRequest {
  chain: string;
  address: string;
  amount_usd: number;
  /** Both signatures checked with the shared secret. */
  signed: boolean;
}

export interface FakeProvider {
  url: string;
  requests: ScreeningRequest[];
  answers: Map<string, ProviderAnswer>;
  /** Requests received and not answered yet, now and at most so far. */
  inFlight: number;
  maxInFlight: number;
  /** Holds every answer from now on until the returned function is called. */
  hold(): () => void;
  close(): Promise<void>;
}

export async function startScreeningProvider(secret: string, fallback: ProviderAnswer = 'allow'): Promise<FakeProvider> {
  const keys = signingKeys(secret, { issued: false });
  let held: Promise<void> = Promise.resolve();
  const provider: FakeProvider = {
    url: '',
    requests: [],
    answers: new Map(),
    inFlight: 0,
    maxInFlight: 0,
    hold: () => {
      let release!: () => void;
      held = new Promise((resolve) => (release = resolve));
      return () => release();
    },
    close: async () => undefined,
  };
  const server: Server = createServer((req, res) => {
    provider.inFlight++;
    provider.maxInFlight = Math.max(provider.maxInFlight, provider.inFlight);
    res.on('close', () => provider.inFlight--);
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      await held;
      const body = Buffer.concat(chunks);
      const id = String(req.headers['webhook-id'] ?? '');
      const timestamp = Number(req.headers['webhook-timestamp']);
      // The key an off-the-shelf Standard Webhooks verifier derives from the secret (for whsec_: the decoded bytes).
      const standard = verifyStandardWebhook(keys.standard[0]!, id, timestamp, body, String(req.headers['webhook-signature'] ?? ''));
      const hex = verifySignature(keys.spec, body, String(req.headers['x-stableroute-signature'] ?? ''));
      const request = JSON.parse(body.toString('utf8')) as Omit<ScreeningRequest, 'signed'>;
      provider.requests.push({ ...request, signed: standard && hex });
      if (!(standard && hex)) {
        res.statusCode = 401;
        return res.end();
      }
      const answer = provider.answers.get(request.address) ?? fallback;
      if (answer === 'hang') return;
      if (answer === 'error') {
        res.statusCode = 500;
        return res.end('{"decision":"deny"}');
      }
      res.setHeader('content-type', 'application/json');
      res.end(answer === 'garbage' ? '{"verdict":"fine"}' : JSON.stringify({ decision: answer }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  provider.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/screen`;
  provider.close = () =>
    new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return provider;
}
