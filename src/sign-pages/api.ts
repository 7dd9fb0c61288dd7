/**
 * The pages' calls to the /app endpoints (docs/persons.md "The API behind the pages: /app").
 * Same-origin fetches: the browser adds the `Origin` header the endpoints require and the session
 * cookie. An error answer `{error: {code, message}}` becomes an ApiError carrying both, so the page
 * can show the service's own words; a network failure becomes one too (code NETWORK).
 */

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = "ApiError";
  }
}

interface ErrorBody {
  error?: { code?: unknown; message?: unknown };
}

export async function call<T>(method: "GET" | "POST" | "DELETE", path: string, body?: unknown): Promise<T> {
  let res: Response;
  try {
    res = await fetch(path, {
      method,
      credentials: "same-origin",
      cache: "no-store",
      headers: body === undefined ? { accept: "application/json" } : { accept: "application/json", "content-type": "application/json" },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  } catch {
    throw new ApiError(0, "NETWORK", "The service could not be reached. Check your network connection, then try again.");
  }
  if (res.status === 204) return undefined as T;
  let json: unknown = null;
  try {
    json = await res.json();
  } catch {
    json = null;
  }
  if (!res.ok) {
    const e = (json as ErrorBody | null)?.error;
    const code = typeof e?.code === "string" ? e.code : `HTTP_${res.status}`;
    const message = typeof e?.message === "string" && e.message !== "" ? e.message : `The service answered with an error (HTTP ${res.status}).`;
    throw new ApiError(res.status, code, message);
  }
  return json as T;
}

/** A person as the /app endpoints describe them. */
export interface AppPerson {
  readonly id: string;
  readonly name: string;
  /** The organisation's name (an object with `name` is accepted too). */
  readonly organisation: string | { readonly name: string };
}

export function organisationName(p: AppPerson): string {
  return typeof p.organisation === "string" ? p.organisation : p.organisation.name;
}

/** One of the person's records, as GET /app/records lists them. */
export interface AppRecord {
  readonly recordId: string;
  readonly originalDocHash: string;
  readonly filename: string | null;
  readonly authenticatedAt: string;
  readonly anchorState: string;
  readonly verifyUrl: string;
  readonly revocation: null | { readonly reason: string; readonly revokedAt: string };
}
