// GET /admin/events: server-sent events for the console's live view. One LISTEN connection per listener process
// (src/core/operators/console/live.ts) fans out to every open stream, so a hundred open consoles cost one
// database connection. Events:
//   ready    on connect, and again whenever the LISTEN connection came back: re-read what you show
//   payment  an intent was created or changed status: {id, status, from, chain, merchant_id, at}
// A comment line every HEARTBEAT_MS keeps proxies and the socket timeout from closing an idle stream. Streams end
// when the app closes, so they never hold up a graceful shutdown.
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { AppContext } from '../../core/context.js';
import { listenToPaymentChanges } from '../../core/operators/console/live.js';
import type { Listener } from '../../db/listener.js';
import { AppError } from '../../domain/errors.js';
import { ADMIN_EVENT_BUFFERED_BYTES_MAX, ADMIN_EVENT_STREAMS_MAX } from '../../bounds.js';

export const HEARTBEAT_MS = 15_000;

interface Stream {
  send(event: string, data: string): void;
  /** closeConnection: at shutdown the keep-alive socket goes too, or the server would wait for it to idle out. */
  end(options?: { closeConnection?: boolean }): void;
}

export function adminEventRoutes(app: FastifyInstance, ctx: AppContext): void {
  const streams = new Set<Stream>();
  let listener: Listener | null = null;
  const broadcast = (event: string, data: string) => {
    for (const stream of streams) stream.send(event, data);
  };
  const ensureListening = () => {
    listener ??= listenToPaymentChanges(ctx, {
      onChange: (notice) => broadcast('payment', notice),
      onListening: () => broadcast('ready', JSON.stringify({ listening: true })),
    });
  };

  app.addHook('preClose', async () => {
    for (const stream of streams) stream.end({ closeConnection: true });
    await listener?.close();
  });

  app.get('/admin/events', { schema: { hide: true } }, async (request, reply: FastifyReply) => {
    if (streams.size >= ADMIN_EVENT_STREAMS_MAX) throw new AppError('SERVICE_UNAVAILABLE', `at most ${ADMIN_EVENT_STREAMS_MAX} event streams are open at once`);
    ensureListening();
    reply.hijack();
    const raw = reply.raw;
    raw.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache, no-transform',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
    });
    const heartbeat = setInterval(() => raw.write(': ping\n\n'), HEARTBEAT_MS);
    heartbeat.unref();
    const stream: Stream = {
      send: (event, data) => {
        if (raw.writableLength <= ADMIN_EVENT_BUFFERED_BYTES_MAX) raw.write(`event: ${event}\ndata: ${data}\n\n`);
        else {
          // Its buffer would never drain: drop the connection rather than wait for a finish that will not come.
          clearInterval(heartbeat);
          streams.delete(stream);
          raw.destroy();
        }
      },
      end: (options = {}) => {
        clearInterval(heartbeat);
        streams.delete(stream);
        raw.end(() => {
          if (options.closeConnection) raw.socket?.destroy();
        });
      },
    };
    streams.add(stream);
    request.raw.on('close', () => stream.end());
    raw.write('retry: 3000\n\n');
    // Ready at once when the listener is up; otherwise when it comes up (onListening).
    if (listener?.listening) stream.send('ready', JSON.stringify({ listening: true }));
  });
}
