/**
 * The receipt verifier (docs/receipts.md §4): parse a receipt, verify it against a document's hash
 * and the ledger's mirror nodes the verifier trusts, confirm who made it, render the report.
 * Imports nothing from the rest of src/ and no node: module, so it bundles for the browser (the
 * verify-receipt page) as well as for Node.js.
 */
export { parseReceipt, ReceiptFormatError, normaliseMirrorUrl, type Receipt, type Anchor, type RevocationAnchor, type SignedPart, type Inclusion } from "./receipt.ts";
export { verifyReceipt, DEFAULT_MIN_MIRRORS, type Report, type Check, type CheckName, type Verdict, type VerifyOptions } from "./verify.ts";
export { parseTrustFile, TrustFileError, builtinMirrors, isPublicNetwork, PUBLIC_NETWORKS, type TrustFile, type PinnedOrganisation } from "./trust.ts";
export { planMirrors, nameResolver, type MirrorSource, type HostResolver } from "./witnesses.ts";
export { confirmIdentity, parseTxtRecord, type Identity, type IdentityStatus, type IdentityMethod } from "./identity.ts";
export { renderReport } from "./render.ts";
export { sha256OfBytes, sha256OfStream } from "./hash.ts";
export { keyFingerprint, recordPayloadV1, sealPayloadV1 } from "./payloads.ts";
export type { FetchFn } from "./mirror.ts";
