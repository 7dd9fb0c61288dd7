/**
 * A small JSON Schema check for the served OpenAPI document's schemas (the keywords the document
 * uses: type, enum, const, required, properties, additionalProperties, items, pattern, formats
 * uuid / date-time / uri, minimum, maximum, minLength, maxLength, maxItems, anyOf, oneOf, $ref).
 * A keyword it does not know fails the check, so that a schema it cannot judge is never passed.
 */
type Schema = Record<string, unknown>;

const KNOWN = new Set([
  "type", "enum", "const", "required", "properties", "additionalProperties", "items", "pattern", "format", "minimum", "maximum",
  "minLength", "maxLength", "maxItems", "minItems", "anyOf", "oneOf", "$ref", "description", "title", "examples", "default", "contentEncoding",
]);
const FORMATS: Record<string, RegExp> = {
  uuid: /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/,
  "date-time": /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/,
  uri: /^[a-z][a-z0-9+.-]*:\/\/\S+$/,
};

function typeOf(v: unknown): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "array";
  if (typeof v === "number") return Number.isInteger(v) ? "integer" : "number";
  return typeof v;
}

/** Every way `value` breaks `schema`, as `path: problem` lines; empty when it conforms. */
export function check(doc: { components?: { schemas?: Record<string, Schema> } }, schema: Schema, value: unknown, at = "$"): string[] {
  const problems: string[] = [];
  for (const k of Object.keys(schema)) if (!KNOWN.has(k)) problems.push(`${at}: schema keyword ${k} not checked`);
  if (typeof schema.$ref === "string") {
    const name = /^#\/components\/schemas\/(.+)$/.exec(schema.$ref)?.[1];
    const target = name === undefined ? undefined : doc.components?.schemas?.[name];
    if (target === undefined) return [...problems, `${at}: unresolved ${schema.$ref}`];
    problems.push(...check(doc, target, value, at));
  }
  if (schema.type !== undefined) {
    const types = Array.isArray(schema.type) ? (schema.type as string[]) : [schema.type as string];
    const actual = typeOf(value);
    if (!types.includes(actual) && !(actual === "integer" && types.includes("number"))) return [...problems, `${at}: ${actual} where ${types.join("|")}`];
  }
  if (Array.isArray(schema.enum) && !schema.enum.includes(value)) problems.push(`${at}: ${JSON.stringify(value)} not in ${JSON.stringify(schema.enum)}`);
  if ("const" in schema && schema.const !== value) problems.push(`${at}: ${JSON.stringify(value)} is not ${JSON.stringify(schema.const)}`);
  if (typeof value === "string") {
    if (typeof schema.pattern === "string" && !new RegExp(schema.pattern, "u").test(value)) problems.push(`${at}: ${JSON.stringify(value)} does not match ${schema.pattern}`);
    const format = schema.format === undefined ? undefined : FORMATS[schema.format as string];
    if (schema.format !== undefined && format === undefined) problems.push(`${at}: format ${String(schema.format)} not checked`);
    if (format !== undefined && !format.test(value)) problems.push(`${at}: ${JSON.stringify(value)} is not a ${String(schema.format)}`);
    const length = [...value].length;
    if (typeof schema.minLength === "number" && length < schema.minLength) problems.push(`${at}: shorter than ${schema.minLength}`);
    if (typeof schema.maxLength === "number" && length > schema.maxLength) problems.push(`${at}: longer than ${schema.maxLength}`);
  }
  if (typeof value === "number") {
    if (typeof schema.minimum === "number" && value < schema.minimum) problems.push(`${at}: ${value} < ${schema.minimum}`);
    if (typeof schema.maximum === "number" && value > schema.maximum) problems.push(`${at}: ${value} > ${schema.maximum}`);
  }
  if (Array.isArray(value)) {
    if (typeof schema.maxItems === "number" && value.length > schema.maxItems) problems.push(`${at}: more than ${schema.maxItems} items`);
    if (typeof schema.minItems === "number" && value.length < schema.minItems) problems.push(`${at}: fewer than ${schema.minItems} items`);
    if (typeof schema.items === "object" && schema.items !== null) value.forEach((v, i) => problems.push(...check(doc, schema.items as Schema, v, `${at}[${i}]`)));
  }
  if (typeOf(value) === "object") {
    const obj = value as Record<string, unknown>;
    const properties = (schema.properties ?? {}) as Record<string, Schema>;
    for (const r of (schema.required ?? []) as string[]) if (!(r in obj)) problems.push(`${at}: ${r} missing`);
    for (const [k, v] of Object.entries(obj)) {
      const sub = properties[k];
      if (sub !== undefined) problems.push(...check(doc, sub, v, `${at}.${k}`));
      else if (schema.additionalProperties === false) problems.push(`${at}: ${k} not allowed`);
      else if (typeof schema.additionalProperties === "object" && schema.additionalProperties !== null) problems.push(...check(doc, schema.additionalProperties as Schema, v, `${at}.${k}`));
    }
  }
  for (const key of ["anyOf", "oneOf"] as const) {
    const options = schema[key];
    if (!Array.isArray(options)) continue;
    const passing = options.filter((s) => check(doc, s as Schema, value, at).length === 0).length;
    if (key === "anyOf" ? passing === 0 : passing !== 1) problems.push(`${at}: ${passing} of ${key} match`);
  }
  return problems;
}
