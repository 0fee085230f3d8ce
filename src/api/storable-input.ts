// Text no database can store (a NUL, a lone surrogate: src/domain/text.ts) is refused at the admin edge wherever a
// request carries it: a path or query parameter, a body value at any depth, a body property name, in a field the route
// reads or one it ignores. Before validation and any handler, so nothing runs and nothing is written: 400 with the code
// a merchant route gives for the same text, INVALID_IDEMPOTENCY_KEY in an idempotency key and INVALID_REQUEST anywhere
// else. The refusal's audit record keeps nothing of what was sent (audit.ts; decision 192).
import type { FastifyInstance } from 'fastify';
import { AppError } from '../domain/errors.js';
import { isStorableText } from '../domain/text.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** Refused for text nothing can store: its audit record keeps none of the request. */
    unstorableInput: boolean;
  }
}

interface Unstorable {
  /** Where, as validation messages say it (`body.items.0.reason`). */
  where: string;
  /** In a property name of `where` rather than in its value. */
  inName: boolean;
  /** The property whose value it is ('' for an array's item). */
  field: string;
}

/** Where `value` (parsed JSON, or a parameter map) holds unstorable text, if anywhere. Iterative: a deep body is no stack risk. */
function findUnstorable(value: unknown, root: string): Unstorable | null {
  const stack: { value: unknown; where: string; field: string }[] = [{ value, where: root, field: '' }];
  for (let next = stack.pop(); next !== undefined; next = stack.pop()) {
    const { value: item, where, field } = next;
    if (typeof item === 'string') {
      if (!isStorableText(item)) return { where, inName: false, field };
    } else if (Array.isArray(item)) {
      item.forEach((element, i) => stack.push({ value: element, where: `${where}.${i}`, field: '' }));
    } else if (item !== null && typeof item === 'object') {
      for (const [name, property] of Object.entries(item)) {
        if (!isStorableText(name)) return { where, inName: true, field: '' };
        stack.push({ value: property, where: `${where}.${name}`, field: name });
      }
    }
  }
  return null;
}

export function registerStorableInput(scope: FastifyInstance): void {
  scope.decorateRequest('unstorableInput', false);
  scope.addHook('preValidation', async (request) => {
    const found = findUnstorable(request.params, 'params') ?? findUnstorable(request.query, 'querystring') ?? findUnstorable(request.body, 'body');
    if (found === null) return;
    request.unstorableInput = true;
    const what = found.inName ? `${found.where} has a property name with` : `${found.where} holds`;
    throw new AppError(
      found.field === 'idempotency_key' ? 'INVALID_IDEMPOTENCY_KEY' : 'INVALID_REQUEST',
      `${what} a NUL character or a lone UTF-16 surrogate, which cannot be stored`,
    );
  });
}
