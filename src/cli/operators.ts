// `stableroute operators create|list|disable|token rotate`: named operators (decision 100). A token is printed once
// (with --json, as the last line's `token`); only its HMAC is stored.
import { parseArgs } from 'node:util';
import type { Config } from '../config.js';
import { systemClock } from '../clock.js';
import {
  createOperator,
  disableOperator,
  operatorInputProblem,
  operators,
  rotateOperatorToken,
  type OperatorRole,
  type OperatorRow,
} from '../core/operators/operators.js';
import type { CliHelpers } from './policies.js';
import { refusable, usage } from './exits.js';
import { cliAudit, recordingRefusals } from './actor.js';

export const OPERATORS_USAGE = `usage: stableroute operators create --name NAME --role viewer|operator|approver|admin [--json]
       stableroute operators list [--json]
       stableroute operators disable OPERATOR_ID [--json]
       stableroute operators token rotate OPERATOR_ID [--json]
`;

export function operatorView(o: OperatorRow) {
  return {
    operator_id: o.id,
    name: o.name,
    role: o.role,
    token_prefix: o.token_prefix,
    status: o.disabled_at ? 'disabled' : 'active',
    created_at: o.created_at.toISOString(),
    token_rotated_at: o.token_rotated_at?.toISOString() ?? null,
    disabled_at: o.disabled_at?.toISOString() ?? null,
  };
}

function line(o: OperatorRow): string {
  const v = operatorView(o);
  return `${v.operator_id}  ${v.role.padEnd(8)} ${v.status.padEnd(8)} ${v.token_prefix}...  ${v.name}`;
}

export async function operatorsCommand(args: string[], config: Config, h: CliHelpers): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: { name: { type: 'string' }, role: { type: 'string' }, json: { type: 'boolean', default: false } },
  });
  const [action, ...rest] = positionals;
  const json = values.json;
  const show = (o: OperatorRow, token?: string) => {
    if (json) h.out(JSON.stringify(token === undefined ? operatorView(o) : { ...operatorView(o), token }));
    else {
      h.out(line(o));
      if (token !== undefined) {
        h.out(`token: ${token}`);
        h.out('The token is shown only this once; hand it to the operator now.');
      }
    }
  };
  if (action === 'create') {
    if (rest.length > 0 || values.name === undefined || values.role === undefined) return usage(OPERATORS_USAGE);
    const problem = operatorInputProblem(values.name, values.role);
    if (problem) return usage(OPERATORS_USAGE, problem);
    return h.withDatabase(config, async (pool) => {
      const audit = cliAudit('operator.create', []);
      const create = () => createOperator(pool, config, { name: values.name!, role: values.role as OperatorRole }, systemClock.now(), audit);
      const { operator, token } = await recordingRefusals({ pool, config }, audit, create);
      show(operator, token);
      return 0;
    });
  }
  if (values.name !== undefined || values.role !== undefined) return usage(OPERATORS_USAGE, '--name and --role go with create');
  if (action === 'list' && rest.length === 0) {
    return h.withDatabase(config, async (pool) => {
      const all = await operators(pool);
      if (json) h.out(JSON.stringify(all.map(operatorView)));
      else if (all.length === 0) h.out('(no operators)');
      else for (const o of all) h.out(line(o));
      return 0;
    });
  }
  const rotate = action === 'token' && rest[0] === 'rotate' && rest.length === 2;
  if (!rotate && !(action === 'disable' && rest.length === 1)) return usage(OPERATORS_USAGE);
  const id = rest[rest.length - 1]!;
  return h.withDatabase(config, async (pool) =>
    refusable(async () => {
      const audit = cliAudit(rotate ? 'operator.token_rotate' : 'operator.disable', [id]);
      if (rotate) {
        const { operator, token } = await recordingRefusals({ pool, config }, audit, () => rotateOperatorToken(pool, config, id, systemClock.now(), audit));
        show(operator, token);
      } else show(await recordingRefusals({ pool, config }, audit, () => disableOperator(pool, config, id, systemClock.now(), audit)));
      return 0;
    }),
  );
}
