// The audit record of an admin request (decision 102): the caller from the guard, the action from the route table,
// the route's parameters as targets and its body as details. A use case appends it in the transaction of the action;
// a state-changing request an identified caller was refused is recorded here, after the refusal, on its own.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { auditRefusal, type AuditEntry } from '../core/operators/audit.js';
import type { AppContext } from '../core/context.js';
import type { Actor } from '../domain/actor.js';
import { auditActionOf } from './admin-access.js';

/** The caller: the guard's actor, or `anonymous` on the open routes called without credentials. */
export function actorOf(request: FastifyRequest): Actor {
  return request.adminActor ?? { id: 'anonymous', role: null, peer: request.socket.remoteAddress ?? null };
}

export function auditEntryOf(request: FastifyRequest): AuditEntry {
  // Refused for text nothing can store (storable-input.ts): recorded without any of what was sent.
  const sent = request.unstorableInput !== true;
  const params = (sent ? (request.params ?? {}) : {}) as Record<string, string>;
  const body = sent && request.body !== null && typeof request.body === 'object' ? (request.body as Record<string, unknown>) : {};
  return {
    actor: actorOf(request),
    action: auditActionOf(request.method, request.routeOptions.url) ?? `${request.method} ${request.routeOptions.url ?? ''}`,
    targets: Object.values(params),
    details: body,
  };
}

/** Records refusals (4xx) of state-changing admin requests made by an identified caller (not `anonymous`). */
export function registerRefusalAudit(scope: FastifyInstance, ctx: AppContext): void {
  scope.addHook('onSend', async (request: FastifyRequest, reply: FastifyReply, payload: unknown) => {
    const status = reply.statusCode;
    if (status < 400 || status >= 500 || request.adminActor === null) return payload;
    if (auditActionOf(request.method, request.routeOptions.url) === null) return payload;
    let code = `HTTP_${status}`;
    try {
      code = (JSON.parse(String(payload)) as { code?: string }).code ?? code;
    } catch {
      // not a JSON body: the status says enough
    }
    try {
      await auditRefusal(ctx, auditEntryOf(request), code, ctx.clock.now());
    } catch (error) {
      request.log.error({ err: error }, 'the audit record of a refused admin request could not be written');
    }
    return payload;
  });
}
