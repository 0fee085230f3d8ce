// JSON-RPC 2.0 plumbing for the Solana devnet: errors with the codes the real RPC uses, a serializer that writes
// bigints as plain JSON numbers (as the real RPC writes u64), and small readers for positional parameters.
export const RPC_PARSE_ERROR = -32700;
export const RPC_INVALID_REQUEST = -32600;
export const RPC_METHOD_NOT_FOUND = -32601;
export const RPC_INVALID_PARAMS = -32602;
export const RPC_INTERNAL_ERROR = -32603;
export const RPC_PREFLIGHT_FAILURE = -32002;
export const RPC_SIGNATURE_VERIFICATION_FAILURE = -32003;
export const RPC_UNSUPPORTED_TRANSACTION_VERSION = -32015;

export class RpcError extends Error {
  override readonly name = 'RpcError';
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
  }
}

export function invalidParams(message: string): RpcError {
  return new RpcError(RPC_INVALID_PARAMS, `Invalid params: ${message}`);
}

/** JSON text of a value; bigints become JSON numbers with every digit kept. */
export function toJson(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  switch (typeof value) {
    case 'bigint':
      return value.toString();
    case 'number':
      return Number.isFinite(value) ? String(value) : 'null';
    case 'string':
    case 'boolean':
      return JSON.stringify(value);
    case 'object': {
      if (Array.isArray(value)) return `[${value.map(toJson).join(',')}]`;
      const fields = Object.entries(value as Record<string, unknown>)
        .filter(([, v]) => v !== undefined)
        .map(([k, v]) => `${JSON.stringify(k)}:${toJson(v)}`);
      return `{${fields.join(',')}}`;
    }
    default:
      return 'null';
  }
}

export type Params = readonly unknown[];
export type Config = Readonly<Record<string, unknown>>;

export function stringParam(params: Params, index: number, name: string): string {
  const value = params[index];
  if (typeof value !== 'string') throw invalidParams(`expected ${name} (a string) at position ${index}`);
  return value;
}

export function stringArrayParam(params: Params, index: number, name: string, max: number): string[] {
  const value = params[index];
  if (!Array.isArray(value) || !value.every((v) => typeof v === 'string')) {
    throw invalidParams(`expected ${name} (an array of strings) at position ${index}`);
  }
  if (value.length > max) throw invalidParams(`${name}: at most ${max} items`);
  return value as string[];
}

export function integerParam(params: Params, index: number, name: string): bigint {
  const value = params[index];
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
    throw invalidParams(`expected ${name} (a non-negative integer) at position ${index}`);
  }
  return BigInt(value);
}

export function configParam(params: Params, index: number): Config {
  const value = params[index];
  if (value === undefined || value === null) return {};
  if (typeof value !== 'object' || Array.isArray(value)) {
    throw invalidParams(`expected a configuration object at position ${index}`);
  }
  return value as Config;
}

export function optionalString(config: Config, key: string): string | undefined {
  const value = config[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw invalidParams(`${key} must be a string`);
  return value;
}

export function optionalBoolean(config: Config, key: string): boolean | undefined {
  const value = config[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'boolean') throw invalidParams(`${key} must be a boolean`);
  return value;
}

export function optionalInteger(config: Config, key: string): number | undefined {
  const value = config[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
    throw invalidParams(`${key} must be a non-negative integer`);
  }
  return value;
}
