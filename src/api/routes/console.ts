// GET /console on the admin listener: the operator console, a page of browser modules served as they are, with no
// build step (decision 105). Its own files live in src/console; Preact and htm come from node_modules, installed by
// `npm ci` like any dependency. Everything is read once at start-up into memory and served from there, by name
// from a fixed table: nothing is fetched from elsewhere (air-gapped deployments work) and no request path ever
// reaches the file system. The page holds no data; it reads the /admin JSON endpoints like any other client.
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { sendError } from '../errors.js';

export const CONSOLE_PATH = '/console';
const CONSOLE_DIR = fileURLToPath(new URL('../../console/', import.meta.url));

/** The npm modules the page imports, under the names its import map gives them: [package, its ES module build]. */
const VENDOR: Record<string, [string, string]> = {
  'vendor/preact.mjs': ['preact', 'dist/preact.mjs'],
  'vendor/preact-hooks.mjs': ['preact', 'hooks/dist/hooks.mjs'],
  'vendor/htm.mjs': ['htm', 'dist/htm.mjs'],
};

/** Where an installed package lives: up from its entry point to its own package.json. */
function packageDir(name: string): string {
  let dir = dirname(createRequire(import.meta.url).resolve(name));
  while (!existsSync(join(dir, 'package.json')) || JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')).name !== name) {
    const up = dirname(dir);
    if (up === dir) throw new Error(`package ${name} not found`);
    dir = up;
  }
  return dir;
}

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
};

interface Asset {
  body: Buffer;
  type: string;
  etag: string;
}

function asset(body: Buffer, name: string): Asset {
  return { body, type: TYPES[extname(name)] ?? 'application/octet-stream', etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"` };
}

function walk(dir: string, prefix = ''): string[] {
  return readdirSync(dir).flatMap((name) => (statSync(join(dir, name)).isDirectory() ? walk(join(dir, name), `${prefix}${name}/`) : [`${prefix}${name}`]));
}

/** Every file the console serves, by its path under /console/. */
export function loadConsoleAssets(): Map<string, Asset> {
  const assets = new Map<string, Asset>();
  for (const name of walk(CONSOLE_DIR)) if (TYPES[extname(name)]) assets.set(name, asset(readFileSync(join(CONSOLE_DIR, name)), name));
  for (const [name, [pkg, file]] of Object.entries(VENDOR)) assets.set(name, asset(readFileSync(join(packageDir(pkg), file)), name));
  return assets;
}

/** The page's policy: its own origin only; the one inline script (the import map) allowed by its hash. */
function contentSecurityPolicy(html: string): string {
  const importMap = /<script type="importmap">([\s\S]*?)<\/script>/.exec(html)?.[1] ?? '';
  const hash = createHash('sha256').update(importMap).digest('base64');
  return [
    "default-src 'self'",
    `script-src 'self' 'sha256-${hash}'`,
    "style-src 'self'",
    "img-src 'self' data:",
    "connect-src 'self'",
    "object-src 'none'",
    "base-uri 'self'",
    "frame-ancestors 'none'",
    "form-action 'none'",
  ].join('; ');
}

export function consoleRoutes(app: FastifyInstance): void {
  const assets = loadConsoleAssets();
  const page = assets.get('index.html')!;
  const policy = contentSecurityPolicy(page.body.toString('utf8'));

  const servePage = async (_request: unknown, reply: FastifyReply) =>
    reply
      .type(page.type)
      .header('cache-control', 'no-cache')
      .header('content-security-policy', policy)
      .header('x-content-type-options', 'nosniff')
      .header('referrer-policy', 'no-referrer')
      .send(page.body);
  app.get(CONSOLE_PATH, { schema: { hide: true } }, servePage);

  app.get<{ Params: { '*': string } }>(`${CONSOLE_PATH}/*`, { schema: { hide: true } }, async (request, reply) => {
    if (request.params['*'] === '') return servePage(request, reply);
    const found = assets.get(request.params['*']);
    if (!found) return sendError(reply, 404, 'NOT_FOUND', `Route GET ${request.url.split('?')[0]} not found`);
    // Revalidated on every load (a restart may ship new files); a 304 costs one small request.
    if (request.headers['if-none-match'] === found.etag) return reply.code(304).header('etag', found.etag).send();
    return reply.type(found.type).header('cache-control', 'no-cache').header('etag', found.etag).header('x-content-type-options', 'nosniff').send(found.body);
  });
}
