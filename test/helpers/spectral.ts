// Spectral as clients run it on our API document: `spectral:oas` plus the OWASP API security ruleset.
import spectralCore from '@stoplight/spectral-core';
import spectralParsers from '@stoplight/spectral-parsers';
import spectralRulesets from '@stoplight/spectral-rulesets';
import owaspRuleset from '@stoplight/spectral-owasp-ruleset';

export interface LintFinding {
  code: string;
  severity: 'error' | 'warning' | 'info' | 'hint';
  path: string;
  message: string;
}

const SEVERITIES = ['error', 'warning', 'info', 'hint'] as const;

export async function lintOpenApi(documentText: string): Promise<LintFinding[]> {
  const { Spectral, Document } = spectralCore;
  const spectral = new Spectral();
  spectral.setRuleset({ extends: [[spectralRulesets.oas, 'recommended'], [owaspRuleset as never, 'recommended']] } as never);
  const results = await spectral.run(new Document(documentText, spectralParsers.Json));
  return results.map((r) => ({
    code: String(r.code),
    severity: SEVERITIES[r.severity],
    path: r.path.join('.'),
    message: r.message,
  }));
}
