/**
 * A software passkey authenticator (WebAuthn Level 2, ES256, attestation "none") for tests and
 * the benchmark: it answers the service's options with the same JSON a browser posts, so the
 * real @simplewebauthn/server verification runs. Each answer can be bent (another origin, relying
 * party or challenge, no user verification) to test refusals.
 */
import { createHash, createPrivateKey, generateKeyPairSync, randomBytes, sign, type KeyObject } from "node:crypto";

const b64u = (b: Uint8Array) => Buffer.from(b).toString("base64url");
const sha256 = (b: Uint8Array | string) => createHash("sha256").update(b).digest();

/** Just enough CBOR (RFC 8949) for an attestation object and a COSE key. */
function cbor(value: unknown): Buffer {
  const head = (major: number, n: number): Buffer => {
    if (n < 24) return Buffer.from([(major << 5) | n]);
    if (n < 256) return Buffer.from([(major << 5) | 24, n]);
    if (n < 65536) return Buffer.from([(major << 5) | 25, n >> 8, n & 255]);
    const b = Buffer.alloc(5);
    b[0] = (major << 5) | 26;
    b.writeUInt32BE(n, 1);
    return b;
  };
  if (typeof value === "number") return value >= 0 ? head(0, value) : head(1, -1 - value);
  if (typeof value === "string") {
    const b = Buffer.from(value, "utf8");
    return Buffer.concat([head(3, b.length), b]);
  }
  if (value instanceof Uint8Array) return Buffer.concat([head(2, value.length), Buffer.from(value)]);
  if (value instanceof Map) {
    const parts: Buffer[] = [head(5, value.size)];
    for (const [k, v] of value) parts.push(cbor(k), cbor(v));
    return Buffer.concat(parts);
  }
  throw new TypeError("cbor: unsupported value");
}

export interface Bend {
  /** The origin the client data names (default: the authenticator's). */
  readonly origin?: string;
  /** The relying party id hashed into the authenticator data (default: the options'). */
  readonly rpId?: string;
  /** Answer this challenge instead of the options' (base64url). */
  readonly challenge?: string;
  /** False: the user-verified flag is not set. */
  readonly userVerified?: boolean;
}

export interface SoftCredential {
  readonly id: Uint8Array;
  readonly key: KeyObject;
  readonly userHandle: string | null;
  counter: number;
}

export class SoftAuthenticator {
  readonly credentials: SoftCredential[] = [];

  /** @param origin what the "browser" says the page's origin is, e.g. http://localhost:8080 */
  constructor(readonly origin: string) {}

  private clientData(type: "webauthn.create" | "webauthn.get", challenge: string, bend: Bend): Buffer {
    return Buffer.from(JSON.stringify({ type, challenge, origin: bend.origin ?? this.origin, crossOrigin: false }), "utf8");
  }

  private flags(bend: Bend, attested: boolean): number {
    return 0x01 | (bend.userVerified === false ? 0 : 0x04) | (attested ? 0x40 : 0);
  }

  /** Answers PublicKeyCredentialCreationOptionsJSON with a RegistrationResponseJSON. */
  register(options: { challenge: string; rp: { id?: string }; user: { id: string } }, bend: Bend = {}): Record<string, unknown> {
    const { privateKey, publicKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
    const jwk = publicKey.export({ format: "jwk" }) as { x: string; y: string };
    const coseKey = cbor(new Map<number, unknown>([[1, 2], [3, -7], [-1, 1], [-2, Buffer.from(jwk.x, "base64url")], [-3, Buffer.from(jwk.y, "base64url")]]));
    const id = randomBytes(16);
    const rpId = bend.rpId ?? options.rp.id!;
    const counter = Buffer.alloc(4);
    const idLength = Buffer.alloc(2);
    idLength.writeUInt16BE(id.length);
    const authData = Buffer.concat([sha256(rpId), Buffer.from([this.flags(bend, true)]), counter, Buffer.alloc(16), idLength, id, coseKey]);
    const attestationObject = cbor(new Map<string, unknown>([["fmt", "none"], ["attStmt", new Map()], ["authData", authData]]));
    this.credentials.push({ id, key: createPrivateKey(privateKey.export({ format: "pem", type: "pkcs8" })), userHandle: options.user.id, counter: 0 });
    return {
      id: b64u(id),
      rawId: b64u(id),
      type: "public-key",
      response: { clientDataJSON: b64u(this.clientData("webauthn.create", bend.challenge ?? options.challenge, bend)), attestationObject: b64u(attestationObject), transports: ["internal"] },
      clientExtensionResults: {},
      authenticatorAttachment: "platform",
    };
  }

  /**
   * Answers PublicKeyCredentialRequestOptionsJSON with an AuthenticationResponseJSON, using the
   * first allowed credential it holds (or `credential`, or its first for discoverable options).
   */
  assert(options: { challenge: string; rpId?: string; allowCredentials?: { id: string }[] }, bend: Bend & { readonly credential?: SoftCredential } = {}): Record<string, unknown> {
    const allowed = options.allowCredentials ?? [];
    const credential =
      bend.credential ?? (allowed.length === 0 ? this.credentials[0] : this.credentials.find((c) => allowed.some((a) => a.id === b64u(c.id))));
    if (credential === undefined) throw new Error("soft authenticator: no credential for these options");
    credential.counter += 1;
    const counter = Buffer.alloc(4);
    counter.writeUInt32BE(credential.counter);
    const authData = Buffer.concat([sha256(bend.rpId ?? options.rpId!), Buffer.from([this.flags(bend, false)]), counter]);
    const clientData = this.clientData("webauthn.get", bend.challenge ?? options.challenge, bend);
    const signature = sign("sha256", Buffer.concat([authData, sha256(clientData)]), credential.key);
    return {
      id: b64u(credential.id),
      rawId: b64u(credential.id),
      type: "public-key",
      response: { clientDataJSON: b64u(clientData), authenticatorData: b64u(authData), signature: b64u(signature), userHandle: credential.userHandle ?? undefined },
      clientExtensionResults: {},
      authenticatorAttachment: "platform",
    };
  }
}
