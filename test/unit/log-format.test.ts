// Logs a person reads in a terminal in development, JSON lines everywhere else (decision 210).
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { logFormatOf } from '../../src/log-format.js';
import { createLogger } from '../../src/runtime.js';

/** A destination that keeps what is written, and the logger's lines once it has flushed them. */
function capture(): { stream: Writable; text: () => string } {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer | string, _encoding, done) {
      chunks.push(chunk.toString());
      done();
    },
  });
  return { stream, text: () => chunks.join('') };
}

const PAYMENT = 'pi_z2naznfs5m5hapyr';

function logOnce(env: Record<string, string>, terminal: boolean): string {
  const config = loadConfig(env);
  const out = capture();
  const log = createLogger(config, { terminal, destination: out.stream });
  log.child({ component: 'execution' }).info({ payment_intent_id: PAYMENT, attempt: 1 }, 'transfer broadcast');
  log.flush();
  return out.text();
}

describe('log format', () => {
  it('is pretty only in development on a terminal, unless LOG_FORMAT says', () => {
    expect(logFormatOf(null, false, true)).toBe('pretty');
    expect(logFormatOf(null, false, false)).toBe('json');
    expect(logFormatOf(null, true, true)).toBe('json');
    expect(logFormatOf('json', false, true)).toBe('json');
    expect(logFormatOf('pretty', true, false)).toBe('pretty');
    expect(loadConfig({}).logFormat).toBeNull();
    expect(loadConfig({ LOG_FORMAT: 'json' }).logFormat).toBe('json');
  });

  it('on a terminal in development: one line with time, level, component, message and payment id', () => {
    const text = logOnce({}, true).replace(/\u001b\[[0-9;]*m/g, ''); // colours: it is a terminal
    const first = text.split('\n')[0]!;
    expect(first).toMatch(/^\[\d{2}:\d{2}:\d{2}\.\d{3}\] INFO: \[execution\] transfer broadcast \(payment pi_z2naznfs5m5hapyr\)$/);
    expect(text).toContain('attempt: 1'); // the record's other fields follow, below the line
    expect(() => JSON.parse(first) as unknown).toThrow();
  });

  it('JSON lines with LOG_FORMAT=json, and when stdout is not a terminal', () => {
    for (const [env, terminal] of [[{ LOG_FORMAT: 'json' }, true], [{}, false]] as const) {
      const record = JSON.parse(logOnce(env, terminal).trim()) as Record<string, unknown>;
      expect(record).toMatchObject({ level: 30, component: 'execution', payment_intent_id: PAYMENT, msg: 'transfer broadcast' });
    }
  });
});
