/**
 * What the enrolment and signing pages say, in words a person without technical training
 * follows (docs/persons.md "How the pages are built"): what each record's state means, the
 * revocation reasons a person can give, and an explanation for every failure, the service's own
 * message included. Pure functions: test/app-pages/words.test.ts checks them without a browser.
 */
import { ApiError } from "./api.ts";

/** What step failed: the same code means different things to the person at each. */
export type Step = "enrol" | "sign-in" | "session" | "sign" | "records" | "revoke" | "sign-out";

const TRY_AGAIN = "Try again; if it keeps happening, tell your administrator.";

/** Plain explanations of the service's error codes; the service's message follows them. */
function explainApi(e: ApiError, step: Step): string {
  const said = e.message;
  switch (e.code) {
    case "NETWORK":
      return said;
    case "RATE_LIMITED":
      return `Too many attempts in a short time: wait a minute, then try again. (${said})`;
    case "SERVICE_UNAVAILABLE":
      return `The service cannot do this right now: try again in a minute. (${said})`;
    case "INTERNAL_ERROR":
      return `Something went wrong inside the service. ${TRY_AGAIN}`;
    case "UNAUTHENTICATED":
      if (step === "sign-in") return `Your passkey was not accepted. ${said}`;
      if (step === "enrol") return `The passkey could not be checked, so you are not enrolled yet. ${said} Try again.`;
      if (step === "sign") return `Your passkey's confirmation was not accepted, so nothing was signed. ${said} Try again.`;
      return `You are not signed in (or were signed out after 15 minutes without activity): sign in again. ${said}`;
    case "ORGANISATION_SUSPENDED":
      return `Your organisation is suspended on this service, so nobody in it can sign for now. Ask your administrator. (${said})`;
    case "FORBIDDEN":
      return step === "enrol" ? said : `This is not allowed. ${said}`;
    case "NOT_REVOCABLE":
      return `You can only revoke documents you signed yourself. (${said})`;
    case "ALREADY_REVOKED":
      return `This signature was already revoked. (${said})`;
    case "ANCHOR_NOT_FINAL":
      return `The ledger has not confirmed this signature yet, so it cannot be revoked yet: try again in a minute. (${said})`;
    case "VALIDATION_FAILED":
      return `The service refused the request: ${said}`;
    default:
      return said;
  }
}

/** What a passkey failure means, from the browser's error (or @simplewebauthn/browser's). */
function explainPasskey(e: Error & { code?: unknown }, step: Step): string | null {
  const nothing = step === "enrol" ? "No passkey was created." : step === "sign" ? "Nothing was signed." : "You are not signed in.";
  const code = typeof e.code === "string" ? e.code : "";
  const name = (e as { cause?: { name?: unknown } }).cause?.name ?? e.name;
  if (/WebAuthn is not supported/i.test(e.message)) {
    return `This browser cannot use passkeys. Open this page in an up-to-date Chrome, Edge, Firefox or Safari. ${nothing}`;
  }
  if (code === "ERROR_AUTHENTICATOR_PREVIOUSLY_REGISTERED" || name === "InvalidStateError") {
    return step === "enrol"
      ? "This device already holds a passkey for you on this service. Go to the signing page and sign in with it."
      : `Your device refused the request. ${nothing}`;
  }
  if (code === "ERROR_AUTHENTICATOR_MISSING_USER_VERIFICATION_SUPPORT") {
    return `This device cannot check that it is you (no fingerprint, face recognition or PIN is set up). Set one up, or use another device or a security key. ${nothing}`;
  }
  if (code === "ERROR_AUTHENTICATOR_MISSING_DISCOVERABLE_CREDENTIAL_SUPPORT") {
    return `This security key cannot hold a passkey. Use your computer's or phone's own passkeys, or another key. ${nothing}`;
  }
  if (code === "ERROR_INVALID_DOMAIN" || code === "ERROR_INVALID_RP_ID" || name === "SecurityError") {
    return `The browser refused to use a passkey at this address. Open the service at the address your administrator gave you (its public address, not a number like 192.168.…). ${nothing}`;
  }
  if (name === "NotAllowedError" || name === "AbortError" || code === "ERROR_CEREMONY_ABORTED" || code === "ERROR_PASSTHROUGH_SEE_CAUSE_PROPERTY") {
    return step === "sign-in"
      ? "The passkey request was cancelled or took too long, or this device has no passkey for this service. You are not signed in. Try again; if you have not enrolled yet, use the enrolment link your administrator sent you."
      : `The passkey request was cancelled or took too long. ${nothing} Try again when you are ready.`;
  }
  if (name === "NotSupportedError") {
    return `This device or browser does not support the kind of passkey this service needs. ${nothing}`;
  }
  return null;
}

/** One sentence or two for any failure at `step`. */
export function explain(error: unknown, step: Step): string {
  if (error instanceof ApiError) return explainApi(error, step);
  if (error instanceof Error) {
    const passkey = explainPasskey(error, step);
    if (passkey !== null) return passkey;
    return `Something went wrong: ${error.message}. ${TRY_AGAIN}`;
  }
  return `Something went wrong. ${TRY_AGAIN}`;
}

/**
 * The word for each state of a record, the same on every page people read (docs/verification.md,
 * "Words on the pages"): the public verify page and the receipt page call a record in good
 * standing Valid, and a revoked one Revoked. The API's names (`anchored`, `active`, …) are for
 * machines.
 */
export const STATE_WORDS = {
  valid: "Valid",
  revoked: "Revoked",
  awaiting: "Awaiting the ledger",
  notRecorded: "Not recorded",
} as const;

/** A record's state, in words, for the person's list: the state's word first, then what it means. */
export function recordStateWords(anchorState: string, revocation: { reason: string } | null): string {
  if (revocation !== null) return `${STATE_WORDS.revoked} (${reasonLabel(revocation.reason)}). Verifiers are told it no longer counts.`;
  switch (anchorState) {
    case "pending":
      return `${STATE_WORDS.awaiting}: sent, not confirmed yet.`;
    case "accepted":
      return `${STATE_WORDS.awaiting}: received by the ledger, confirmation expected within seconds.`;
    case "anchored":
      return `${STATE_WORDS.valid}: confirmed on the ledger, final.`;
    case "abandoned":
      return `${STATE_WORDS.notRecorded}: the ledger did not confirm it in time. Sign the document again.`;
    default:
      return anchorState;
  }
}

/**
 * The reasons a person may give when revoking their own signature: the API's RevocationReason codes
 * (the service checks them), in the person's words. The first is the default.
 */
export const REVOKE_REASONS: readonly { readonly code: string; readonly label: string }[] = [
  { code: "UNSPECIFIED", label: "I prefer not to say" },
  { code: "SUPERSEDED", label: "A newer version replaces this document" },
  { code: "ERROR_IN_DOCUMENT", label: "The document has a mistake in it" },
  { code: "KEY_COMPROMISE", label: "Someone else may have used my passkey" },
  { code: "PRIVILEGE_WITHDRAWN", label: "I was not entitled to sign it" },
  { code: "AFFILIATION_CHANGED", label: "I no longer act for this organisation" },
  { code: "OTHER", label: "Another reason" },
];

export function reasonLabel(code: string): string {
  return REVOKE_REASONS.find((r) => r.code === code)?.label.toLowerCase() ?? code;
}

/** 1234567 → "1.2 MB". */
export function readableSize(bytes: number): string {
  if (bytes < 1000) return `${bytes} bytes`;
  if (bytes < 1_000_000) return `${(bytes / 1000).toFixed(1)} kB`;
  return `${(bytes / 1_000_000).toFixed(1)} MB`;
}

/** The file name for the signed copy: `contract.pdf` → `contract-signed.pdf`. */
export function signedName(filename: string): string {
  const base = filename.replace(/\.pdf$/i, "");
  return `${base === "" ? "document" : base}-signed.pdf`;
}
