/**
 * The WebAuthn ceremonies of the person application (docs/persons.md), and the only module that
 * imports `@simplewebauthn/server`. The relying party is the public URL: its host is the relying
 * party id, its origin the only origin an answer may come from.
 *
 * What callers may assume:
 * - Every option this makes requires user verification (a PIN or biometric on the authenticator,
 *   not only presence), and every verification here refuses an answer without it.
 * - A verification failure is an `AnswerRefused` whose message says, in plain words, what was
 *   wrong (another challenge, origin or relying party, no user verification, a bad signature);
 *   never a library stack.
 * - `challengeOf` reads the challenge an answer claims to answer without trusting anything else in
 *   it: the caller looks it up among the challenges it issued, and the verification then checks
 *   the signature over it.
 */
import type {
  AuthenticationResponseJSON,
  AuthenticatorTransport,
  PublicKeyCredentialCreationOptionsJSON,
  PublicKeyCredentialRequestOptionsJSON,
  RegistrationResponseJSON,
} from "@simplewebauthn/server";
import { DomainError } from "../lib/errors.ts";

/**
 * The library, loaded on first use and after the Reflect metadata polyfill its certificate code
 * (tsyringe, through @peculiar/x509) requires: in the compiled binary's bundle a static import
 * cannot guarantee that order, and the polyfill would come too late.
 */
let library: Promise<typeof import("@simplewebauthn/server")> | null = null;
function simpleWebAuthn(): Promise<typeof import("@simplewebauthn/server")> {
  library ??= import("reflect-metadata").then(() => import("@simplewebauthn/server"));
  return library;
}

/** How long a person has to answer a challenge. */
export const CHALLENGE_TTL_MS = 5 * 60 * 1000;

/** An answer (registration or assertion) that does not verify: 401 UNAUTHENTICATED. */
export class AnswerRefused extends DomainError {
  constructor(message: string) {
    super("UNAUTHENTICATED", message);
  }
}

export interface RelyingParty {
  /** The public URL's host name: a passkey belongs to it. */
  readonly id: string;
  /** The public URL's origin. */
  readonly origin: string;
  /** Shown by the authenticator when a passkey is created. */
  readonly name: string;
}

export function relyingPartyOf(publicUrl: string): RelyingParty {
  const url = new URL(publicUrl);
  return { id: url.hostname, origin: url.origin, name: "docverify" };
}

export interface StoredPasskey {
  readonly credentialId: string;
  readonly publicKey: Uint8Array;
  readonly counter: number;
  readonly transports: readonly string[];
}

/** A registration or assertion body: an object with the standard JSON members. 400 otherwise. */
function assertCredentialJson(body: Record<string, unknown>, kind: "registration" | "assertion"): void {
  const response = body.response as Record<string, unknown> | undefined;
  const ok =
    typeof body.id === "string" &&
    typeof body.rawId === "string" &&
    body.type === "public-key" &&
    response !== null &&
    typeof response === "object" &&
    typeof response.clientDataJSON === "string" &&
    (kind === "registration" ? typeof response.attestationObject === "string" : typeof response.authenticatorData === "string" && typeof response.signature === "string");
  if (!ok) {
    const fields = kind === "registration" ? "id, rawId, type, response.clientDataJSON, response.attestationObject" : "id, rawId, type, response.clientDataJSON, response.authenticatorData, response.signature";
    throw new DomainError("VALIDATION_FAILED", `The body must be the passkey's ${kind} in the standard WebAuthn JSON form (${fields}).`, { body: `not a WebAuthn ${kind} response` });
  }
}

/** The challenge an answer's client data claims (base64url), or a 401 when it has none. */
export function challengeOf(body: Record<string, unknown>, kind: "registration" | "assertion"): string {
  assertCredentialJson(body, kind);
  const clientDataJSON = (body.response as { clientDataJSON: string }).clientDataJSON;
  try {
    const clientData = JSON.parse(Buffer.from(clientDataJSON, "base64url").toString("utf8")) as { challenge?: unknown };
    if (typeof clientData.challenge === "string" && /^[A-Za-z0-9_-]{16,128}$/.test(clientData.challenge)) return clientData.challenge;
  } catch {
    // Refused below.
  }
  throw new AnswerRefused("The passkey's answer does not name a challenge this service issued.");
}

/** Plain words for the library's refusal. */
function why(e: unknown): string {
  const message = e instanceof Error ? e.message : String(e);
  if (/origin/i.test(message)) return "it was made for another website (origin) than this service.";
  if (/RP ID|rpID|relying party/i.test(message)) return "it was made for another relying party than this service.";
  if (/user verification|user could not be verified|UV/i.test(message)) return "the authenticator did not verify the person (a PIN, fingerprint or face is required).";
  if (/challenge/i.test(message)) return "it answers another challenge.";
  if (/counter/i.test(message)) return "the authenticator's counter went backwards: the answer may be a replay or the passkey a copy.";
  if (/signature/i.test(message)) return "its signature is not valid.";
  return "it is not valid.";
}

/** A verification by the library, its refusal (thrown or `verified: false`) as AnswerRefused in plain words. */
async function verified<T extends { verified: boolean }>(what: string, run: () => Promise<T>): Promise<T> {
  let result: T;
  try {
    result = await run();
  } catch (e) {
    throw new AnswerRefused(`${what}: ${why(e)}`);
  }
  if (!result.verified) throw new AnswerRefused(`${what}: it is not valid.`);
  return result;
}

export function createWebAuthn(rp: () => RelyingParty) {
  /** What every answer must match: the challenge, this origin and relying party, user verification. */
  const expected = (expectedChallenge: string) => ({ expectedChallenge, expectedOrigin: rp().origin, expectedRPID: rp().id, requireUserVerification: true });

  return {
    async registrationOptions(input: { challenge: Uint8Array; personId: string; userName: string; displayName: string; exclude: readonly StoredPasskey[] }): Promise<PublicKeyCredentialCreationOptionsJSON> {
      const { generateRegistrationOptions } = await simpleWebAuthn();
      return generateRegistrationOptions({
        rpName: rp().name,
        rpID: rp().id,
        userName: input.userName,
        userDisplayName: input.displayName,
        userID: new TextEncoder().encode(input.personId),
        challenge: new Uint8Array(input.challenge),
        timeout: CHALLENGE_TTL_MS,
        attestationType: "none",
        excludeCredentials: input.exclude.map((p) => ({ id: p.credentialId, transports: p.transports as AuthenticatorTransport[] })),
        authenticatorSelection: { residentKey: "required", userVerification: "required" },
        // ES256 and EdDSA cover every platform authenticator; RS256 for older Windows Hello.
        supportedAlgorithmIDs: [-7, -8, -257],
      });
    },

    /** The new passkey, or AnswerRefused. */
    async verifyRegistration(body: Record<string, unknown>, expectedChallenge: string): Promise<StoredPasskey> {
      assertCredentialJson(body, "registration");
      const { verifyRegistrationResponse } = await simpleWebAuthn();
      const result = await verified("The passkey could not be registered", () =>
        verifyRegistrationResponse({ response: body as unknown as RegistrationResponseJSON, ...expected(expectedChallenge) }),
      );
      const { credential } = result.registrationInfo!;
      return { credentialId: credential.id, publicKey: credential.publicKey, counter: credential.counter, transports: credential.transports ?? [] };
    },

    async authenticationOptions(input: { challenge: Uint8Array; allow: readonly StoredPasskey[] }): Promise<PublicKeyCredentialRequestOptionsJSON> {
      const { generateAuthenticationOptions } = await simpleWebAuthn();
      return generateAuthenticationOptions({
        rpID: rp().id,
        challenge: new Uint8Array(input.challenge),
        timeout: CHALLENGE_TTL_MS,
        userVerification: "required",
        allowCredentials: input.allow.map((p) => ({ id: p.credentialId, transports: p.transports as AuthenticatorTransport[] })),
      });
    },

    /** The passkey's new counter, or AnswerRefused. */
    async verifyAssertion(body: Record<string, unknown>, expectedChallenge: string, passkey: StoredPasskey): Promise<number> {
      assertCredentialJson(body, "assertion");
      const { verifyAuthenticationResponse } = await simpleWebAuthn();
      const result = await verified("The passkey's answer was refused", () =>
        verifyAuthenticationResponse({
          response: body as unknown as AuthenticationResponseJSON,
          ...expected(expectedChallenge),
          credential: { id: passkey.credentialId, publicKey: new Uint8Array(passkey.publicKey), counter: passkey.counter, transports: passkey.transports as AuthenticatorTransport[] },
        }),
      );
      return result.authenticationInfo!.newCounter;
    },
  };
}

export type WebAuthn = ReturnType<typeof createWebAuthn>;
