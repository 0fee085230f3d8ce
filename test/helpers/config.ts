// What loadConfig refuses: the ConfigError it throws for `env` (a test fails when the configuration is accepted).
import { expect } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';

export function refusal(env: Record<string, string | undefined>): ConfigError {
  try {
    loadConfig(env);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return error as ConfigError;
  }
  throw new Error('the configuration was accepted');
}
