// The outside screening provider (SCREENING_URL): one signed JSON POST per address, {chain, address, amount_usd},
// answered {"decision":"allow"|"deny"} within SCREENING_TIMEOUT_SECONDS. Signed like our webhooks (Standard Webhooks
// headers and the spec's hex signature, keyed by SCREENING_SECRET; webhook-id is a fresh scr_ id), so the provider, or
// the operator's proxy in front of it, knows the request is ours. The URL is the operator's own configuration, so the
// webhooks' SSRF guard does not apply (like OPERATOR_WEBHOOK_URL), and redirects are not followed. Answers are kept in
// memory per (chain, address), bounded in count and time; a timeout, a non-2xx or a malformed answer is never kept and
// means what SCREENING_FAIL says. Right before signing the remembered `allow` is not used: the provider is asked again
// (decision 183). One call asks once per distinct address, at most SCREENING_PROVIDER_REQUESTS_AT_ONCE_MAX at a time.
import type { Logger } from 'pino';
import {
  SCREENING_ALLOW_CACHE_SECONDS,
  SCREENING_ANSWER_BYTES_MAX,
  SCREENING_CACHE_ENTRIES_MAX,
  SCREENING_DENY_CACHE_SECONDS,
  SCREENING_PROVIDER_REQUESTS_AT_ONCE_MAX,
} from '../../bounds.js';
import type { Clock } from '../../clock.js';
import type { ScreeningFailMode } from '../../config.js';
import type { Chain } from '../../domain/chain.js';
import { lookupKey, type ScreeningVerdict } from '../../domain/screening.js';
import { newId } from '../../ids.js';
import { usdcToNumber } from '../../money.js';
import { buildWebhookHeaders } from '../../webhook-client/request.js';

export interface ProviderSettings {
  url: string;
  secret: string;
  timeoutSeconds: number;
  fail: ScreeningFailMode;
}

export interface Recipient {
  chain: Chain;
  address: string;
  amountMicros: bigint;
}

export interface ScreenOptions {
  /** Ask the provider again instead of trusting a remembered `allow` (a remembered `deny` still refuses). */
  fresh?: boolean;
}

type Decision = 'allow' | 'deny';

/** Why an answer could not be used; never the answer's body (it could echo anything). */
class ProviderFailure extends Error {}

export class ScreeningProvider {
  /** Oldest first: a Map keeps insertion order, so the first key is the one to forget when full. */
  private readonly answers = new Map<string, { decision: Decision; untilMs: number }>();
  /** Questions on their way: concurrent quotes to one recipient share one request (bounded by the requests in flight). */
  private readonly asking = new Map<string, Promise<Decision>>();

  constructor(
    private readonly settings: ProviderSettings,
    private readonly clock: Clock,
    private readonly log: Logger,
  ) {}

  /**
   * The provider's verdict on each recipient, in order: one request per distinct address not in the cache, at most
   * SCREENING_PROVIDER_REQUESTS_AT_ONCE_MAX of them in flight, so one HTTP request of ours (a payout batch of a
   * thousand items) never fans out into a thousand requests at once.
   */
  async screen(recipients: readonly Recipient[], options: ScreenOptions = {}): Promise<ScreeningVerdict[]> {
    const distinct = new Map<string, Recipient>();
    for (const recipient of recipients) {
      const key = `${recipient.chain}:${lookupKey(recipient.chain, recipient.address)}`;
      if (!distinct.has(key)) distinct.set(key, recipient);
    }
    const waiting = [...distinct];
    const decided = new Map<string, Decision>();
    const lane = async () => {
      for (let next = waiting.shift(); next !== undefined; next = waiting.shift()) decided.set(next[0], await this.decide(next[0], next[1], options.fresh ?? false));
    };
    await Promise.all(Array.from({ length: Math.min(SCREENING_PROVIDER_REQUESTS_AT_ONCE_MAX, waiting.length) }, lane));
    return recipients.map((r) =>
      decided.get(`${r.chain}:${lookupKey(r.chain, r.address)}`) === 'deny' ? { hit: true, by: 'provider', source: 'provider' } : { hit: false },
    );
  }

  private async decide(key: string, recipient: Recipient, fresh: boolean): Promise<Decision> {
    const nowMs = this.clock.now().getTime();
    const cached = this.answers.get(key);
    if (cached && cached.untilMs > nowMs && !(fresh && cached.decision === 'allow')) return cached.decision;
    this.answers.delete(key);
    // A question already on its way was asked within SCREENING_TIMEOUT_SECONDS: fresh enough to share.
    const pending = this.asking.get(key);
    if (pending) return pending;
    const asked = this.askAndKeep(key, recipient, nowMs).finally(() => this.asking.delete(key));
    this.asking.set(key, asked);
    return asked;
  }

  private async askAndKeep(key: string, recipient: Recipient, nowMs: number): Promise<Decision> {
    try {
      const decision = await this.ask(recipient);
      const keepSeconds = decision === 'allow' ? SCREENING_ALLOW_CACHE_SECONDS : SCREENING_DENY_CACHE_SECONDS;
      if (this.answers.size >= SCREENING_CACHE_ENTRIES_MAX) this.answers.delete(this.answers.keys().next().value!);
      this.answers.set(key, { decision, untilMs: nowMs + keepSeconds * 1000 });
      return decision;
    } catch (error) {
      const problem = error instanceof ProviderFailure ? error.message : (error as { name?: string }).name === 'TimeoutError' ? 'timeout' : 'unreachable';
      const decision: Decision = this.settings.fail === 'closed' ? 'deny' : 'allow';
      this.log.warn({ chain: recipient.chain, problem, screening_fail: this.settings.fail }, `screening provider failed; SCREENING_FAIL=${this.settings.fail} ${decision === 'deny' ? 'refuses' : 'allows'} the recipient`);
      return decision;
    }
  }

  private async ask(recipient: Recipient): Promise<Decision> {
    const body = JSON.stringify({ chain: recipient.chain, address: recipient.address, amount_usd: usdcToNumber(recipient.amountMicros) });
    const headers = buildWebhookHeaders(this.settings.secret, newId('scr'), Math.floor(this.clock.now().getTime() / 1000), body);
    const signal = AbortSignal.timeout(this.settings.timeoutSeconds * 1000);
    const response = await fetch(this.settings.url, { method: 'POST', headers, body, redirect: 'manual', signal });
    if (response.status < 200 || response.status > 299) {
      await response.body?.cancel().catch(() => undefined);
      throw new ProviderFailure(`HTTP ${response.status}`);
    }
    const text = await boundedText(response);
    let answer: unknown;
    try {
      answer = JSON.parse(text);
    } catch {
      throw new ProviderFailure('malformed answer (not JSON)');
    }
    const decision = (answer as { decision?: unknown } | null)?.decision;
    if (decision !== 'allow' && decision !== 'deny') throw new ProviderFailure('malformed answer (no "decision": "allow" or "deny")');
    return decision;
  }
}

/** The answer's body, refused past SCREENING_ANSWER_BYTES_MAX. */
async function boundedText(response: Response): Promise<string> {
  if (!response.body) return '';
  const chunks: Uint8Array[] = [];
  let bytes = 0;
  for await (const chunk of response.body as AsyncIterable<Uint8Array>) {
    bytes += chunk.length;
    if (bytes > SCREENING_ANSWER_BYTES_MAX) {
      await response.body.cancel().catch(() => undefined);
      throw new ProviderFailure(`answer longer than ${SCREENING_ANSWER_BYTES_MAX} bytes`);
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}
