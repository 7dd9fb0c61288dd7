/**
 * The OpenAPI document as served at `/v1/openapi.json`: what @elysiajs/openapi generates from the
 * routes, refined so that a client generator (openapi-typescript, docs/clients.md) gets named
 * types and exact ones, and so that the document speaks of this service: its `servers` and every
 * example name the service's public URL (DOCVERIFY_PUBLIC_URL, or the address `serve` listens on),
 * `info.contact` names whom to ask (DOCVERIFY_CONTACT), every operation has one of a few tags, and
 * the HEAD answers every GET path gives are declared. Description only: nothing here changes what
 * a route accepts or answers.
 */
export type Json = Record<string, unknown>;
export const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);

/** Operations whose callers spend a rate-limit budget, and so get `X-RateLimit-*` headers. */
const RATE_LIMITED_PATHS = (path: string) =>
  path.startsWith("/v1/") || path === "/verify-receipt" || path.endsWith("/receipt") || path.startsWith("/.well-known/") || path.startsWith("/app/enrol/") || path.startsWith("/app/session");

/** Operations every origin may read (their route sets `Access-Control-Allow-Origin: *` on each answer it gives). */
const CROSS_ORIGIN_PATHS = (path: string) => path === "/.well-known/docverify.json";

const HEADERS: Json = {
  "Access-Control-Allow-Origin": {
    description: "`*`: a page on any origin may read this public document (the receipt verifier's page confirms an organisation's domain with it)",
    required: true,
    schema: { type: "string", const: "*" },
  },
  "X-Request-Id": { description: "This request's id, also in the service's log line for it", required: true, schema: { type: "string", format: "uuid" } },
  "X-RateLimit-Limit": {
    description:
      "The tightest rate limit that applied to this request (requests per window). Absent when the request was answered before any limit was consulted (405, a body over 1 MiB, shutting down)",
    schema: { type: "integer", minimum: 0 },
  },
  "X-RateLimit-Remaining": { description: "Requests left in that limit's window", schema: { type: "integer", minimum: 0 } },
  "Retry-After": { description: "Seconds to wait before retrying", schema: { type: "integer", minimum: 1 } },
  "Retry-After-Required": { description: "Seconds to wait before retrying", required: true, schema: { type: "integer", minimum: 1 } },
  Allow: { description: "The methods the path accepts, e.g. `GET, HEAD`", required: true, schema: { type: "string" } },
};
const headerRef = (name: string) => ({ $ref: `#/components/headers/${name}` });

/**
 * TypeBox's integer in a response schema comes out as `anyOf: [{type: string, format: integer,
 * default: 0}, {type: integer}]` (Elysia's coercion); the service always sends a JSON integer.
 */
function collapseCoercedInteger(node: Json): Json {
  const anyOf = node.anyOf;
  if (!Array.isArray(anyOf) || anyOf.length !== 2) return node;
  const coerced = anyOf.find((s) => isObject(s) && s.type === "string" && s.format === "integer");
  const integer = anyOf.find((s) => isObject(s) && s.type === "integer");
  if (coerced === undefined || !isObject(integer)) return node;
  const { anyOf: _, ...rest } = node;
  return { ...integer, ...rest };
}

/**
 * Walks a schema bottom-up: coerced integers collapsed, unions of string literals as enums, `t.Record` maps (`patternProperties`
 * `^(.*)$`) as `additionalProperties`, and every schema with a `title` moved to
 * `components.schemas` under that title, replaced by a `$ref`. A component's description is its
 * `x-description`; a use's own description stays with the use (a response's, a property's).
 */
function refineSchema(node: unknown, components: Json): unknown {
  if (Array.isArray(node)) return node.map((n) => refineSchema(n, components));
  if (!isObject(node)) return node;
  let out: Json = {};
  for (const [k, v] of Object.entries(node)) {
    // `properties` and `patternProperties` map names to schemas; their keys are not keywords.
    if ((k === "properties" || k === "patternProperties") && isObject(v)) {
      out[k] = Object.fromEntries(Object.entries(v).map(([name, s]) => [name, refineSchema(s, components)]));
    } else if (isObject(v) || Array.isArray(v)) out[k] = refineSchema(v, components);
    else out[k] = v;
  }
  out = collapseCoercedInteger(out);
  // A union of string literals (TypeBox's form where Elysia does not flatten it) as one enum.
  const anyOf = out.anyOf;
  if (Array.isArray(anyOf) && anyOf.length > 0 && anyOf.every((s) => isObject(s) && s.type === "string" && typeof s.const === "string" && Object.keys(s).length === 2)) {
    const { anyOf: _, ...rest } = out;
    out = { ...rest, type: "string", enum: anyOf.map((s) => (s as Json).const) };
  }
  const pattern = out.patternProperties;
  if (isObject(pattern) && Object.keys(pattern).length === 1 && "^(.*)$" in pattern) {
    const { patternProperties: _, ...rest } = out;
    out = { ...rest, additionalProperties: pattern["^(.*)$"] };
  }
  if (typeof out.title === "string") {
    const { title, description, "x-description": about, ...body } = out;
    if (!(title in components)) components[title] = { title, ...(typeof about === "string" ? { description: about } : {}), ...body };
    return { $ref: `#/components/schemas/${title}`, ...(typeof description === "string" ? { description } : {}) };
  }
  return out;
}

const ERROR_REF = { $ref: "#/components/schemas/Error" };
/** What /app operations say instead of a curl command. */
export const APP_NOTE = "A step of the enrolment or signing page, where a person signs with a passkey: the passkey, in a browser, answers it, so there is no terminal example. docs/persons.md gives the whole sequence.";

/**
 * The operation as a curl command, for the documentation page, which cannot send requests
 * (TRY_IT_NOTE): the credential when the operation needs one, and a body of the required
 * properties' example values (an `examples` entry, else the first of an enum).
 */
function curlExample(base: string, path: string, method: string, op: Json, schemas: Json): string {
  const hasBody = isObject(op.requestBody);
  // HEAD is curl's -I: `-X HEAD` would wait for a body that never comes.
  const flags = method === "head" ? "-sI" : `-s${method === "get" || (method === "post" && hasBody) ? "" : ` -X ${method.toUpperCase()}`}`;
  const parts = [`curl ${flags} '${base}${path.replace(/\{(\w+)\}/g, "<$1>")}'`];
  // The credential when every way to call the operation takes one (POST /v1/verifications is
  // also anonymous: its example is the public tier's).
  const security = Array.isArray(op.security) ? op.security : [];
  if (security.length > 0 && security.every((s) => isObject(s) && "bearer" in s)) parts.push(`-H "authorization: Bearer $DOCVERIFY_KEY"`);
  const resolve = (schema: unknown): Json => {
    const name = isObject(schema) && typeof schema.$ref === "string" ? schema.$ref.split("/").at(-1)! : undefined;
    return name !== undefined && isObject(schemas[name]) ? resolve(schemas[name]) : isObject(schema) ? schema : {};
  };
  const body = isObject(op.requestBody) && isObject(op.requestBody.content) ? op.requestBody.content["application/json"] : undefined;
  if (isObject(body)) {
    const schema = resolve(body.schema);
    const properties = isObject(schema.properties) ? schema.properties : {};
    const example: Json = {};
    for (const name of Array.isArray(schema.required) ? (schema.required as string[]) : []) {
      const p = resolve(properties[name]);
      example[name] = Array.isArray(p.examples) ? p.examples[0] : Array.isArray(p.enum) ? p.enum[0] : `<${name}>`;
    }
    parts.push(`-H 'content-type: application/json'`, `-d '${JSON.stringify(example)}'`);
  }
  return parts.join(" \\\n  ");
}

/** What the document says of the service that serves it. */
export interface DocumentSite {
  /** The service's public URL, without a trailing slash: `servers` and every example. */
  readonly publicUrl: string;
  /** DOCVERIFY_CONTACT; null: the operator of the service at `publicUrl`. */
  readonly contact: { readonly email: string } | { readonly url: string } | null;
  /** The product's version (and commit), in the description. */
  readonly version: string;
}

/** Shown in the document's description, hence on /docs above the operations. */
export function tryItNote(base: string): string {
  return (
    "This page cannot send requests: a browser adds an `Origin` header even to a same-origin POST, and `/v1` refuses every request that carries one " +
    "(403 FORBIDDEN: the API is called from servers, never from a browser). Call the API from a server or a terminal instead, for example:\n\n" +
    `\`\`\`sh\ncurl -s ${base}/v1/verifications -H 'content-type: application/json' \\\n  -d '{"originalDocHash":"sha256:2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824"}'\n\`\`\`\n\n` +
    "To generate a typed client from this document, see docs/clients.md. What `/v1` promises, and how a change is announced, is in docs/versioning.md."
  );
}

/**
 * The tags, in the order /docs shows them; every operation has exactly one (its route's `detail`
 * names it; test/openapi/site.test.ts holds them to this list).
 */
export const TAGS: readonly { name: string; description: string }[] = [
  { name: "Verifications", description: "Is this document authentic? Send its SHA-256: the verdict, the matching records and the checks recomputed on each request (docs/verification.md); and an organisation's log of its verifications." },
  { name: "Records", description: "Authenticate a document (a record of its hash, sealed and anchored on the ledger) and revoke it (docs/records.md). With an API key." },
  { name: "Receipts", description: "A record's receipt: what a verifier needs to check the record without this service (docs/receipts.md)." },
  { name: "Identity", description: "Which organisations this service anchors for, their ledger topics and keys (docs/receipts.md)." },
  { name: "Pages", description: "The public HTML pages: a record's verify page and the receipt verifier." },
  { name: "Person application", description: "The steps behind the enrolment and signing pages, answered by a person's passkey in a browser (docs/persons.md)." },
  { name: "Service", description: "Liveness and readiness, for monitors and load balancers." },
];

/** `getPublicReceipt` → `headPublicReceipt`, `listVerifications` → `headVerifications`. */
const headOperationId = (id: string) => "head" + id.replace(/^(get|list)/, "");

/**
 * The HEAD operation of a GET one: every GET path answers HEAD with the GET's status and headers
 * and no body (the HTTP layer routes HEAD as GET; test/openapi/site.test.ts checks each).
 */
function headOf(get: Json): Json {
  const head = structuredClone(get);
  head.operationId = headOperationId(String(get.operationId));
  head.summary = `${String(get.summary)} (headers only)`;
  head.description = `The status and headers the \`GET\` answers, without its body (to learn whether something exists without downloading it).${typeof get.description === "string" ? `\n\n${get.description}` : ""}`;
  return head;
}

/** The document as served for one public URL: refined again only when the generated document or the URL changes. */
export function documentRefiner(): (generated: Json, site: DocumentSite) => Json {
  const refined = new WeakMap<Json, { site: string; doc: Json }>();
  return (generated, site) => {
    const key = JSON.stringify(site);
    const known = refined.get(generated);
    if (known !== undefined && known.site === key) return known.doc;
    const doc = refineDocument(generated, site);
    refined.set(generated, { site: key, doc });
    return doc;
  };
}

/** The served document: the plugin's, refined (see above). Pure: returns a new object. */
export function refineDocument(generated: Json, site: DocumentSite): Json {
  const doc = structuredClone(generated);
  const schemas: Json = {};
  const base = site.publicUrl.replace(/\/+$/, "");
  const paths = isObject(doc.paths) ? doc.paths : {};
  for (const [path, item] of Object.entries(paths)) {
    if (!isObject(item)) continue;
    if (isObject(item.get) && item.head === undefined) item.head = headOf(item.get);
    const methods = Object.keys(item).filter((m) => ["get", "head", "post", "put", "patch", "delete"].includes(m));
    for (const method of methods) {
      const op = item[method] as Json;
      // Public operations say so: no credential needed (the default would be none declared).
      if (op.security === undefined) op.security = [];
      if (Array.isArray(op.parameters)) {
        op.parameters = op.parameters.map((p: Json) => {
          if (p.in === "path" && typeof p.name === "string" && p.name.endsWith("Id")) {
            return { ...p, description: p.description ?? "A UUID; a malformed one is answered like an unknown one (404)", schema: { type: "string", format: "uuid" } };
          }
          return { ...p, schema: refineSchema(p.schema, schemas) };
        });
      }
      const body = op.requestBody;
      if (isObject(body) && isObject(body.content)) {
        for (const media of Object.values(body.content)) if (isObject(media)) media.schema = refineSchema(media.schema, schemas);
      }
      // The person application's steps are a browser's: a passkey answers them, so no curl.
      op.description = path.startsWith("/app/")
        ? `${typeof op.description === "string" ? `${op.description}\n\n` : ""}${APP_NOTE}`
        : `${typeof op.description === "string" ? `${op.description}\n\n` : ""}From a terminal:\n\n\`\`\`sh\n${curlExample(base, path, method, op, schemas)}\n\`\`\``;
      const responses = (op.responses ?? {}) as Json;
      // Every path answers 405 to a method it does not have (with `Allow`); for the health
      // routes it is the only 4xx.
      responses["405"] = {
        description: "METHOD_NOT_ALLOWED: the path does not accept the request's method; `Allow` lists those it does",
        headers: { Allow: headerRef("Allow") },
        content: { "application/json": { schema: ERROR_REF } },
      };
      for (const [status, response] of Object.entries(responses)) {
        if (!isObject(response)) continue;
        // A 204 has no body (Elysia writes one for its t.Void schema).
        if (status === "204") delete response.content;
        if (isObject(response.content)) {
          for (const media of Object.values(response.content)) if (isObject(media)) media.schema = refineSchema(media.schema, schemas);
        }
        const headers: Json = { ...(isObject(response.headers) ? response.headers : {}), "X-Request-Id": headerRef("X-Request-Id") };
        if (RATE_LIMITED_PATHS(path)) {
          headers["X-RateLimit-Limit"] = headerRef("X-RateLimit-Limit");
          headers["X-RateLimit-Remaining"] = headerRef("X-RateLimit-Remaining");
        }
        // Not on a 405: that answer comes before any route.
        if (CROSS_ORIGIN_PATHS(path) && status !== "405") headers["Access-Control-Allow-Origin"] = headerRef("Access-Control-Allow-Origin");
        if (status === "429") headers["Retry-After"] = headerRef("Retry-After-Required");
        if (status === "503" || status === "409") headers["Retry-After"] = headerRef("Retry-After");
        response.headers = headers;
      }
      op.responses = Object.fromEntries(Object.entries(responses).sort(([a], [b]) => a.localeCompare(b)));
      // A HEAD answer has no body, whatever its status.
      if (method === "head") for (const response of Object.values(op.responses as Json)) if (isObject(response)) delete response.content;
    }
  }
  const info = isObject(doc.info) ? doc.info : {};
  doc.info = {
    ...info,
    description:
      `Document authenticity verification. Callers send a document's SHA-256 hash, never the document. ` +
      `Served by docverify ${site.version}. Calls come from servers: a request carrying an Origin header is refused with 403.\n\n` +
      tryItNote(base),
    contact:
      site.contact === null
        ? { name: `The operator of the docverify service at ${base}`, url: base }
        : { name: "The operator of this docverify service", ...site.contact },
  };
  // DOCVERIFY_PUBLIC_URL, or the address serve listens on when that is unset.
  doc.servers = [{ url: base, description: "This docverify service" }];
  doc.tags = TAGS.map((t) => ({ ...t }));
  const components = isObject(doc.components) ? doc.components : {};
  doc.components = {
    ...components,
    schemas: Object.fromEntries(Object.entries({ ...(isObject(components.schemas) ? components.schemas : {}), ...schemas }).sort(([a], [b]) => a.localeCompare(b))),
    headers: HEADERS,
  };
  return doc;
}
