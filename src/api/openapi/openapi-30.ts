// Route schemas are JSON Schema draft-07: Ajv validates requests with them and fast-json-stringify serialises
// replies with them. The document we publish is OpenAPI 3.0.3, whose Schema Object is an older dialect (decision 89).
// @fastify/swagger already rewrites `type: [t, 'null']` to `nullable: true` and `const` to `enum`; this rewrites what
// it leaves in draft-07 form: numeric `exclusiveMinimum` / `exclusiveMaximum`, which 3.0 only has as booleans next
// to `minimum` / `maximum`. It also spells out "at least one of these properties" members (`anyOf: [{required: [a]},
// ...]`) as the object schemas they mean, the form client generators can type (openapi-typescript makes a bare
// `{required}` member `unknown`, which swallows the whole union). Pure: it returns converted copies and never touches
// the schemas Ajv compiled.

export type JsonObject = { [key: string]: unknown };

export function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Draft-07 `exclusiveMinimum: e` (x > e), possibly with `minimum: m` (x >= m), as 3.0's one bound: the stricter of
 * the two. Same for the maximum.
 */
function convertBound(schema: JsonObject, exclusive: 'exclusiveMinimum' | 'exclusiveMaximum'): void {
  const limit = schema[exclusive];
  if (typeof limit !== 'number') return;
  const inclusive = exclusive === 'exclusiveMinimum' ? 'minimum' : 'maximum';
  const other = schema[inclusive];
  const inclusiveIsStricter =
    typeof other === 'number' && (exclusive === 'exclusiveMinimum' ? other > limit : other < limit);
  if (inclusiveIsStricter) {
    delete schema[exclusive];
  } else {
    schema[inclusive] = limit;
    schema[exclusive] = true;
  }
}

/**
 * A member that only lists required properties of its parent, as the object schema it stands for: same meaning
 * (the parent already declares the type and the properties), but a type a generator can name.
 */
function spellOutRequiredMember(member: unknown, properties: JsonObject): unknown {
  if (!isObject(member) || !Array.isArray(member.required) || Object.keys(member).length !== 1) return member;
  const required = member.required.filter((name): name is string => typeof name === 'string' && name in properties);
  if (required.length !== member.required.length) return member;
  return { type: 'object', required, properties: Object.fromEntries(required.map((name) => [name, properties[name]])) };
}

const SUBSCHEMA = ['items', 'additionalProperties', 'not'] as const;
const SUBSCHEMA_LISTS = ['allOf', 'anyOf', 'oneOf'] as const;

/** One Schema Object and everything nested in it, in OpenAPI 3.0 form. */
export function schemaTo30(schema: unknown): unknown {
  if (!isObject(schema)) return schema;
  const out: JsonObject = { ...schema };
  convertBound(out, 'exclusiveMinimum');
  convertBound(out, 'exclusiveMaximum');
  if (isObject(out.properties)) {
    out.properties = Object.fromEntries(Object.entries(out.properties).map(([name, property]) => [name, schemaTo30(property)]));
  }
  for (const key of SUBSCHEMA) {
    if (Array.isArray(out[key])) out[key] = (out[key] as unknown[]).map(schemaTo30);
    else if (isObject(out[key])) out[key] = schemaTo30(out[key]);
  }
  for (const key of SUBSCHEMA_LISTS) {
    if (!Array.isArray(out[key])) continue;
    const properties = isObject(out.properties) ? out.properties : {};
    out[key] = (out[key] as unknown[]).map((member) => schemaTo30(spellOutRequiredMember(member, properties)));
  }
  return out;
}

function mapValues(value: unknown, fn: (entry: JsonObject) => JsonObject): unknown {
  if (!isObject(value)) return value;
  return Object.fromEntries(Object.entries(value).map(([key, entry]) => [key, isObject(entry) ? fn(entry) : entry]));
}

function withSchema(holder: JsonObject): JsonObject {
  return 'schema' in holder ? { ...holder, schema: schemaTo30(holder.schema) } : holder;
}

function parametersTo30(parameters: unknown): unknown {
  return Array.isArray(parameters) ? parameters.map((p) => (isObject(p) ? withSchema(p) : p)) : parameters;
}

function operationTo30(operation: JsonObject): JsonObject {
  const out: JsonObject = { ...operation, parameters: parametersTo30(operation.parameters) };
  if (operation.parameters === undefined) delete out.parameters;
  if (isObject(operation.requestBody)) {
    out.requestBody = { ...operation.requestBody, content: mapValues(operation.requestBody.content, withSchema) };
  }
  out.responses = mapValues(operation.responses, (response) => {
    const converted: JsonObject = { ...response };
    if ('content' in response) converted.content = mapValues(response.content, withSchema);
    if ('headers' in response) converted.headers = mapValues(response.headers, withSchema);
    return converted;
  });
  return out;
}

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

/** Every Schema Object of the document (components, parameters, bodies, responses, headers) in 3.0 form. */
export function documentTo30(document: JsonObject): JsonObject {
  const out: JsonObject = { ...document };
  if (isObject(document.components)) {
    out.components = { ...document.components, schemas: mapValues(document.components.schemas, (s) => schemaTo30(s) as JsonObject) };
  }
  out.paths = mapValues(document.paths, (pathItem) => {
    const converted: JsonObject = { ...pathItem };
    if ('parameters' in pathItem) converted.parameters = parametersTo30(pathItem.parameters);
    for (const method of METHODS) {
      const operation = pathItem[method];
      if (isObject(operation)) converted[method] = operationTo30(operation);
    }
    return converted;
  });
  return out;
}
