// GET /docs on the public listener: interactive API docs (Swagger UI, from @fastify/swagger-ui) over the same
// OpenAPI document as /openapi.json, so the examples and the shared Error body of every merchant operation show
// there, and "Try it out" sends real requests to this service (Authorize with an X-Api-Key first). Every asset comes
// from the npm package: nothing is fetched from elsewhere, and the Content-Security-Policy says so to the browser.
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';

export const DOCS_PATH = '/docs';

/**
 * The package's policy, minus what would reach outside an air-gapped network or break plain-HTTP deployments, plus
 * inline styles, which Swagger UI sets as it renders (scripts stay limited to the service's own files).
 */
export function offlinePolicy(header: string): string {
  return header
    .replaceAll(' https:', '')
    .replace("style-src 'self'", "style-src 'self' 'unsafe-inline'")
    .replace(' validator.swagger.io', '')
    .replace(/\s*upgrade-insecure-requests;/, '')
    .replace("default-src 'self';", "default-src 'self'; connect-src 'self';");
}

export async function registerDocs(app: FastifyInstance): Promise<void> {
  await app.register(swaggerUi, {
    routePrefix: DOCS_PATH,
    staticCSP: true,
    transformStaticCSP: offlinePolicy,
    // BaseLayout: no top bar, whose box would load documents from other URLs.
    uiConfig: { layout: 'BaseLayout', deepLinking: true, displayRequestDuration: true, defaultModelsExpandDepth: 0, tryItOutEnabled: false },
  });
}
