// Who is calling (GET /admin/me, for the console), who the operators are (GET /admin/operators: the names the console
// shows for the ids in the audit log and on approvals) and the audit log (GET /admin/audit). Thin: validate, call
// core, shape.
import type { FastifyInstance } from 'fastify';
import { auditRecords, type AuditRow } from '../../core/operators/audit.js';
import type { AppContext } from '../../core/context.js';
import { actorName, operators, type OperatorRow } from '../../core/operators/operators.js';
import { ROLE_PERMISSIONS } from '../admin-access.js';
import { actorOf } from '../audit.js';
import { nullableTimestamp, timestamp } from '../schemas/common.js';
import { ADMIN_PAGE_ROWS_DEFAULT, ADMIN_PAGE_ROWS_MAX } from '../../bounds.js';

const auditRecordSchema = {
  type: 'object',
  properties: {
    seq: { type: 'string' },
    at: timestamp,
    actor: { type: 'string' },
    actor_role: { type: ['string', 'null'] },
    action: { type: 'string' },
    targets: { type: 'array', items: { type: 'string' } },
    details: { type: 'object', additionalProperties: true },
    peer: { type: ['string', 'null'] },
    outcome: { type: 'string' },
    prev_hash: { type: 'string' },
    hash: { type: 'string' },
  },
} as const;

const auditView = (r: AuditRow) => ({ ...r, at: r.at.toISOString() });

const operatorSchema = {
  type: 'object',
  properties: {
    operator_id: { type: 'string' },
    name: { type: 'string' },
    role: { type: 'string', enum: ['viewer', 'operator', 'approver', 'admin'] },
    status: { type: 'string', enum: ['active', 'disabled'] },
    created_at: timestamp,
    disabled_at: nullableTimestamp,
  },
} as const;

/** Who an operator is, without anything of its token (not even the prefix the CLI shows to tell tokens apart). */
const operatorView = (o: OperatorRow) => ({
  operator_id: o.id,
  name: o.name,
  role: o.role,
  status: o.disabled_at ? 'disabled' : 'active',
  created_at: o.created_at.toISOString(),
  disabled_at: o.disabled_at?.toISOString() ?? null,
});

export function adminAuditRoutes(app: FastifyInstance, ctx: AppContext): void {
  app.get(
    '/admin/me',
    {
      schema: {
        tags: ['admin'],
        summary: 'Who the credentials name: operator id and name, role, and what the role may do',
        response: {
          200: {
            type: 'object',
            properties: {
              actor: { type: 'string' },
              name: { type: ['string', 'null'] },
              role: { type: ['string', 'null'] },
              permissions: { type: 'array', items: { type: 'string' } },
            },
          },
        },
      },
    },
    async (request) => {
      const actor = actorOf(request);
      const name = await actorName(ctx.pool, actor.id);
      return { actor: actor.id, name, role: actor.role, permissions: actor.role === null ? [] : [...ROLE_PERMISSIONS[actor.role]] };
    },
  );

  app.get(
    '/admin/operators',
    {
      schema: {
        tags: ['admin'],
        summary: 'Every operator, disabled ones included (the audit log names them): id, name, role, status; never a token',
        response: { 200: { type: 'array', items: operatorSchema } },
      },
    },
    async () => (await operators(ctx.pool)).map(operatorView),
  );

  app.get<{ Querystring: { actor?: string; action?: string; target?: string; cursor?: string; limit?: string } }>(
    '/admin/audit',
    {
      schema: {
        tags: ['admin'],
        summary: 'The audit log, newest first, filtered by actor, action or target id; `{data, next_cursor}`',
        querystring: {
          type: 'object',
          additionalProperties: false,
          properties: {
            actor: { type: 'string', minLength: 1, maxLength: 200 },
            action: { type: 'string', minLength: 1, maxLength: 200 },
            target: { type: 'string', minLength: 1, maxLength: 256 },
            cursor: { type: 'string', pattern: '^[0-9]{1,18}$' },
            limit: { type: 'string', pattern: '^[0-9]{1,3}$' },
          },
        },
        response: {
          200: { type: 'object', properties: { data: { type: 'array', items: auditRecordSchema }, next_cursor: { type: ['string', 'null'] } } },
        },
      },
      config: { validationCodes: { '': 'INVALID_FILTER' } },
    },
    async (request) => {
      const limit = Math.min(ADMIN_PAGE_ROWS_MAX, Math.max(1, Number(request.query.limit ?? ADMIN_PAGE_ROWS_DEFAULT)));
      const { actor, action, target, cursor } = request.query;
      const rows = await auditRecords(ctx.pool, { actor, action, target, before: cursor === undefined ? undefined : BigInt(cursor), limit });
      return { data: rows.map(auditView), next_cursor: rows.length === limit ? rows[rows.length - 1]!.seq : null };
    },
  );
}
