/**
 * GENERATED FILE: do not edit. The types of the OpenAPI document docverify serves at
 * GET /v1/openapi.json, made by openapi-typescript. Regenerate from a checkout with:
 *
 *   bun scripts/gen-client-types.ts
 */
/* eslint-disable */

export interface paths {
    "/healthz": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Liveness: the process answers
         * @description From a terminal:
         *
         *     ```sh
         *     curl -s 'http://127.0.0.1:0/healthz'
         *     ```
         */
        get: operations["getHealth"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        /**
         * Liveness: the process answers (headers only)
         * @description The status and headers the `GET` answers, without its body (to learn whether something exists without downloading it).
         *
         *     From a terminal:
         *
         *     ```sh
         *     curl -sI 'http://127.0.0.1:0/healthz'
         *     ```
         */
        head: operations["headHealth"];
        patch?: never;
        trace?: never;
    };
    "/readyz": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Readiness: storage writable and the ledger reachable
         * @description From a terminal:
         *
         *     ```sh
         *     curl -s 'http://127.0.0.1:0/readyz'
         *     ```
         */
        get: operations["getReadiness"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        /**
         * Readiness: storage writable and the ledger reachable (headers only)
         * @description The status and headers the `GET` answers, without its body (to learn whether something exists without downloading it).
         *
         *     From a terminal:
         *
         *     ```sh
         *     curl -sI 'http://127.0.0.1:0/readyz'
         *     ```
         */
        head: operations["headReadiness"];
        patch?: never;
        trace?: never;
    };
    "/v1/verifications": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The calling organisation's verification log, newest first
         * @description Scoped to the key's organisation and environment. Filters: `verdict`, `originalDocHash`, `from`, `to` (RFC 3339); `limit` 1–100 (default 25); `after` is the previous page's `pagination.nextCursor`, valid only with the same filters. Unknown or repeated parameters are refused. Every response carries `X-RateLimit-Limit` and `X-RateLimit-Remaining` (the tightest applicable limit). A request carrying an `Origin` header is refused with 403.
         *
         *     From a terminal:
         *
         *     ```sh
         *     curl -s 'http://127.0.0.1:0/v1/verifications' \
         *       -H "authorization: Bearer $DOCVERIFY_KEY"
         *     ```
         */
        get: operations["listVerifications"];
        put?: never;
        /**
         * Verify a document hash
         * @description Anonymous calls get the public tier; a credential gets the organisation tier and a log row. A credential that is present and unusable gets 401, never the public tier. Body limit 4 KiB. Every response carries `X-RateLimit-Limit` and `X-RateLimit-Remaining` (the tightest applicable limit). A request carrying an `Origin` header is refused with 403.
         *
         *     From a terminal:
         *
         *     ```sh
         *     curl -s 'http://127.0.0.1:0/v1/verifications' \
         *       -H 'content-type: application/json' \
         *       -d '{"originalDocHash":"sha256:2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824"}'
         *     ```
         */
        post: operations["verifyDocument"];
        delete?: never;
        options?: never;
        /**
         * The calling organisation's verification log, newest first (headers only)
         * @description The status and headers the `GET` answers, without its body (to learn whether something exists without downloading it).
         *
         *     Scoped to the key's organisation and environment. Filters: `verdict`, `originalDocHash`, `from`, `to` (RFC 3339); `limit` 1–100 (default 25); `after` is the previous page's `pagination.nextCursor`, valid only with the same filters. Unknown or repeated parameters are refused. Every response carries `X-RateLimit-Limit` and `X-RateLimit-Remaining` (the tightest applicable limit). A request carrying an `Origin` header is refused with 403.
         *
         *     From a terminal:
         *
         *     ```sh
         *     curl -sI 'http://127.0.0.1:0/v1/verifications' \
         *       -H "authorization: Bearer $DOCVERIFY_KEY"
         *     ```
         */
        head: operations["headVerifications"];
        patch?: never;
        trace?: never;
    };
    "/v1/verifications/{verificationId}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * One verification as it was recorded (`matches` always empty)
         * @description 404 alike for a missing, malformed, other organisation's or other environment's id. Every response carries `X-RateLimit-Limit` and `X-RateLimit-Remaining` (the tightest applicable limit). A request carrying an `Origin` header is refused with 403.
         *
         *     From a terminal:
         *
         *     ```sh
         *     curl -s 'http://127.0.0.1:0/v1/verifications/<verificationId>' \
         *       -H "authorization: Bearer $DOCVERIFY_KEY"
         *     ```
         */
        get: operations["getVerification"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        /**
         * One verification as it was recorded (`matches` always empty) (headers only)
         * @description The status and headers the `GET` answers, without its body (to learn whether something exists without downloading it).
         *
         *     404 alike for a missing, malformed, other organisation's or other environment's id. Every response carries `X-RateLimit-Limit` and `X-RateLimit-Remaining` (the tightest applicable limit). A request carrying an `Origin` header is refused with 403.
         *
         *     From a terminal:
         *
         *     ```sh
         *     curl -sI 'http://127.0.0.1:0/v1/verifications/<verificationId>' \
         *       -H "authorization: Bearer $DOCVERIFY_KEY"
         *     ```
         */
        head: operations["headVerification"];
        patch?: never;
        trace?: never;
    };
    "/v1/records": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Authenticate a document as the calling organisation
         * @description Signs the hash with the organisation's ML-DSA-65 system key, seals it with the service key and queues its ledger message. The hash is the idempotency key: the first call answers 201, a repeat while the organisation holds an active record for the hash answers 200 with that record and changes nothing (a different filename is ignored). Needs `records:write` on a `live` key. 403 ORGANISATION_SUSPENDED while an administrator has suspended the organisation (its keys still verify and revoke). 503 with `Retry-After` while the organisation's ledger topic is being created or the key store is sealed. Every response carries `X-RateLimit-Limit` and `X-RateLimit-Remaining` (the tightest applicable limit). A request carrying an `Origin` header is refused with 403.
         *
         *     From a terminal:
         *
         *     ```sh
         *     curl -s 'http://127.0.0.1:0/v1/records' \
         *       -H "authorization: Bearer $DOCVERIFY_KEY" \
         *       -H 'content-type: application/json' \
         *       -d '{"originalDocHash":"sha256:2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824"}'
         *     ```
         */
        post: operations["createRecord"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/records/{recordId}/revoke": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Revoke a record this organisation authenticated
         * @description Permanent. Any key of the organisation with `records:revoke` may revoke any record the organisation authenticated through the API. 403 NOT_REVOCABLE for another organisation's or a person-signed record (not distinguished); 404 for an unknown or malformed id; 409 ALREADY_REVOKED (never succeeds on retry) or ANCHOR_NOT_FINAL (retry once verification reports verified_org). Verification reports the record revoked as soon as this returns; the decision's ledger message anchors in the background. Every response carries `X-RateLimit-Limit` and `X-RateLimit-Remaining` (the tightest applicable limit). A request carrying an `Origin` header is refused with 403.
         *
         *     From a terminal:
         *
         *     ```sh
         *     curl -s 'http://127.0.0.1:0/v1/records/<recordId>/revoke' \
         *       -H "authorization: Bearer $DOCVERIFY_KEY" \
         *       -H 'content-type: application/json' \
         *       -d '{"reason":"SUPERSEDED"}'
         *     ```
         */
        post: operations["revokeRecord"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/verify/{recordId}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Public verification page of a record (HTML)
         * @description The page a Record's `verifyUrl` points to. Needs no credential. Shows the filename, the hash, the organisation's registered name, the signed time, the status in the words every page uses (Valid, Awaiting the ledger, or Revoked with its reason; times in UTC to the second), the anchor state and ledger links, and hashes a dropped file in the browser to compare (of a docverify-signed PDF, the original inside it). Once the record is anchored it links to its receipt (GET /verify/{recordId}/receipt). An unknown, malformed or abandoned id gets a 404 page.
         *
         *     From a terminal:
         *
         *     ```sh
         *     curl -s 'http://127.0.0.1:0/verify/<recordId>'
         *     ```
         */
        get: operations["getVerifyPage"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        /**
         * Public verification page of a record (HTML) (headers only)
         * @description The status and headers the `GET` answers, without its body (to learn whether something exists without downloading it).
         *
         *     The page a Record's `verifyUrl` points to. Needs no credential. Shows the filename, the hash, the organisation's registered name, the signed time, the status in the words every page uses (Valid, Awaiting the ledger, or Revoked with its reason; times in UTC to the second), the anchor state and ledger links, and hashes a dropped file in the browser to compare (of a docverify-signed PDF, the original inside it). Once the record is anchored it links to its receipt (GET /verify/{recordId}/receipt). An unknown, malformed or abandoned id gets a 404 page.
         *
         *     From a terminal:
         *
         *     ```sh
         *     curl -sI 'http://127.0.0.1:0/verify/<recordId>'
         *     ```
         */
        head: operations["headVerifyPage"];
        patch?: never;
        trace?: never;
    };
    "/verify-receipt": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The receipt verifier (HTML)
         * @description A self-contained page that checks a receipt (GET /verify/{recordId}/receipt) against the document and the ledger's mirror nodes, in the browser: the document is hashed locally and never uploaded; the only requests go to the mirror nodes listed (starting from the verifier's built-in ones for the receipt's network, never the receipt's own) and to the well-known document of a domain the organisation announces, to confirm its identity. The same file is dist/verify-receipt.html. Needs no credential; limited per client IP like anonymous verification.
         *
         *     From a terminal:
         *
         *     ```sh
         *     curl -s 'http://127.0.0.1:0/verify-receipt'
         *     ```
         */
        get: operations["getReceiptVerifierPage"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        /**
         * The receipt verifier (HTML) (headers only)
         * @description The status and headers the `GET` answers, without its body (to learn whether something exists without downloading it).
         *
         *     A self-contained page that checks a receipt (GET /verify/{recordId}/receipt) against the document and the ledger's mirror nodes, in the browser: the document is hashed locally and never uploaded; the only requests go to the mirror nodes listed (starting from the verifier's built-in ones for the receipt's network, never the receipt's own) and to the well-known document of a domain the organisation announces, to confirm its identity. The same file is dist/verify-receipt.html. Needs no credential; limited per client IP like anonymous verification.
         *
         *     From a terminal:
         *
         *     ```sh
         *     curl -sI 'http://127.0.0.1:0/verify-receipt'
         *     ```
         */
        head: operations["headReceiptVerifierPage"];
        patch?: never;
        trace?: never;
    };
    "/v1/records/{recordId}/receipt": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * A record's receipt, for the organisation that authenticated it
         * @description A receipt proves the record with the document and two independent mirror nodes, without this service (check it with `docverify verify-receipt`). Issued afresh on every request (`issuedAt`, the revocation as known then); every other field is fixed. Holds no filename. Needs `verifications:read`; only the key's own organisation's records (another's is a 404, like an unknown id). Every response carries `X-RateLimit-Limit` and `X-RateLimit-Remaining` (the tightest applicable limit). A request carrying an `Origin` header is refused with 403.
         *
         *     From a terminal:
         *
         *     ```sh
         *     curl -s 'http://127.0.0.1:0/v1/records/<recordId>/receipt' \
         *       -H "authorization: Bearer $DOCVERIFY_KEY"
         *     ```
         */
        get: operations["getRecordReceipt"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        /**
         * A record's receipt, for the organisation that authenticated it (headers only)
         * @description The status and headers the `GET` answers, without its body (to learn whether something exists without downloading it).
         *
         *     A receipt proves the record with the document and two independent mirror nodes, without this service (check it with `docverify verify-receipt`). Issued afresh on every request (`issuedAt`, the revocation as known then); every other field is fixed. Holds no filename. Needs `verifications:read`; only the key's own organisation's records (another's is a 404, like an unknown id). Every response carries `X-RateLimit-Limit` and `X-RateLimit-Remaining` (the tightest applicable limit). A request carrying an `Origin` header is refused with 403.
         *
         *     From a terminal:
         *
         *     ```sh
         *     curl -sI 'http://127.0.0.1:0/v1/records/<recordId>/receipt' \
         *       -H "authorization: Bearer $DOCVERIFY_KEY"
         *     ```
         */
        head: operations["headRecordReceipt"];
        patch?: never;
        trace?: never;
    };
    "/verify/{recordId}/receipt": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * A record's receipt, public (the verify page's download)
         * @description A receipt proves the record with the document and two independent mirror nodes, without this service (check it with `docverify verify-receipt`). Issued afresh on every request (`issuedAt`, the revocation as known then); every other field is fixed. Holds no filename. Needs no credential (one sent is ignored) and accepts any Origin; limited per client IP like anonymous verification, whose budget it shares. Every response carries `X-RateLimit-Limit` and `X-RateLimit-Remaining`.
         *
         *     From a terminal:
         *
         *     ```sh
         *     curl -s 'http://127.0.0.1:0/verify/<recordId>/receipt'
         *     ```
         */
        get: operations["getPublicReceipt"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        /**
         * A record's receipt, public (the verify page's download) (headers only)
         * @description The status and headers the `GET` answers, without its body (to learn whether something exists without downloading it).
         *
         *     A receipt proves the record with the document and two independent mirror nodes, without this service (check it with `docverify verify-receipt`). Issued afresh on every request (`issuedAt`, the revocation as known then); every other field is fixed. Holds no filename. Needs no credential (one sent is ignored) and accepts any Origin; limited per client IP like anonymous verification, whose budget it shares. Every response carries `X-RateLimit-Limit` and `X-RateLimit-Remaining`.
         *
         *     From a terminal:
         *
         *     ```sh
         *     curl -sI 'http://127.0.0.1:0/verify/<recordId>/receipt'
         *     ```
         */
        head: operations["headPublicReceipt"];
        patch?: never;
        trace?: never;
    };
    "/.well-known/docverify.json": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * This service's organisations, their ledger topics and keys
         * @description Binds each organisation's registered name to its ledger topic and key fingerprints, for a verifier who trusts this service's web address. Needs no credential; limited per client IP like anonymous verification. Every response carries `X-RateLimit-Limit` and `X-RateLimit-Remaining`, and `Access-Control-Allow-Origin: *` (a page on another origin may read it).
         *
         *     From a terminal:
         *
         *     ```sh
         *     curl -s 'http://127.0.0.1:0/.well-known/docverify.json'
         *     ```
         */
        get: operations["getIdentity"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        /**
         * This service's organisations, their ledger topics and keys (headers only)
         * @description The status and headers the `GET` answers, without its body (to learn whether something exists without downloading it).
         *
         *     Binds each organisation's registered name to its ledger topic and key fingerprints, for a verifier who trusts this service's web address. Needs no credential; limited per client IP like anonymous verification. Every response carries `X-RateLimit-Limit` and `X-RateLimit-Remaining`, and `Access-Control-Allow-Origin: *` (a page on another origin may read it).
         *
         *     From a terminal:
         *
         *     ```sh
         *     curl -sI 'http://127.0.0.1:0/.well-known/docverify.json'
         *     ```
         */
        head: operations["headIdentity"];
        patch?: never;
        trace?: never;
    };
    "/app/enrol/{token}/options": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Start enrolling: options for creating the passkey
         * @description Called from the service's own pages: the request must carry `Origin` equal to the public URL's origin (403 otherwise). 404 for an unknown link, 403 for one expired, used, replaced or of a suspended person; 402 ADDON_REQUIRED or 403 ORGANISATION_SUSPENDED for the organisation.
         *
         *     A step of the enrolment or signing page, where a person signs with a passkey: the passkey, in a browser, answers it, so there is no terminal example. docs/persons.md gives the whole sequence.
         */
        post: operations["enrolmentOptions"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/app/enrol/{token}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Finish enrolling: register the passkey, create the person's key
         * @description Called from the service's own pages: the request must carry `Origin` equal to the public URL's origin (403 otherwise). Uses the link, registers the passkey, creates the person's ML-DSA-65 key and queues its announcement on the organisation's topic, and signs the person in (Set-Cookie). 401 when the passkey's answer does not verify (another challenge, origin or relying party, no user verification).
         *
         *     A step of the enrolment or signing page, where a person signs with a passkey: the passkey, in a browser, answers it, so there is no terminal example. docs/persons.md gives the whole sequence.
         */
        post: operations["enrol"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/app/session/options": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Start signing in: options for a passkey assertion
         * @description Called from the service's own pages: the request must carry `Origin` equal to the public URL's origin (403 otherwise). Any of this service's passkeys may answer (discoverable credentials).
         *
         *     A step of the enrolment or signing page, where a person signs with a passkey: the passkey, in a browser, answers it, so there is no terminal example. docs/persons.md gives the whole sequence.
         */
        post: operations["sessionOptions"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/app/session": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Who is signed in
         * @description Needs the session cookie `docverify_session` (401 without one, or after 15 minutes unused).
         *
         *     A step of the enrolment or signing page, where a person signs with a passkey: the passkey, in a browser, answers it, so there is no terminal example. docs/persons.md gives the whole sequence.
         */
        get: operations["getSession"];
        put?: never;
        /**
         * Sign in with the passkey
         * @description Called from the service's own pages: the request must carry `Origin` equal to the public URL's origin (403 otherwise). Sets the session cookie (HttpOnly, SameSite=Strict, Secure over https). 401 for an unknown passkey or an answer that does not verify or was already used; 403 for a suspended person.
         *
         *     A step of the enrolment or signing page, where a person signs with a passkey: the passkey, in a browser, answers it, so there is no terminal example. docs/persons.md gives the whole sequence.
         */
        post: operations["signIn"];
        /**
         * Sign out
         * @description Called from the service's own pages: the request must carry `Origin` equal to the public URL's origin (403 otherwise). Ends the session and clears the cookie.
         *
         *     A step of the enrolment or signing page, where a person signs with a passkey: the passkey, in a browser, answers it, so there is no terminal example. docs/persons.md gives the whole sequence.
         */
        delete: operations["signOut"];
        options?: never;
        /**
         * Who is signed in (headers only)
         * @description The status and headers the `GET` answers, without its body (to learn whether something exists without downloading it).
         *
         *     Needs the session cookie `docverify_session` (401 without one, or after 15 minutes unused).
         *
         *     A step of the enrolment or signing page, where a person signs with a passkey: the passkey, in a browser, answers it, so there is no terminal example. docs/persons.md gives the whole sequence.
         */
        head: operations["headSession"];
        patch?: never;
        trace?: never;
    };
    "/app/signatures/options": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Prepare a signature: the record it will create, and the assertion options that commit to it
         * @description Called from the service's own pages: the request must carry `Origin` equal to the public URL's origin (403 otherwise). Needs the session cookie `docverify_session` (401 without one, or after 15 minutes unused). The record's id, time and payload are fixed here. 403 for a suspended person, ORGANISATION_SUSPENDED, 402 ADDON_REQUIRED.
         *
         *     A step of the enrolment or signing page, where a person signs with a passkey: the passkey, in a browser, answers it, so there is no terminal example. docs/persons.md gives the whole sequence.
         */
        post: operations["signatureOptions"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/app/signatures": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Sign: the passkey's assertion over the prepared record
         * @description Called from the service's own pages: the request must carry `Origin` equal to the public URL's origin (403 otherwise). Needs the session cookie `docverify_session` (401 without one, or after 15 minutes unused). Verifies the assertion, signs with the person's key, seals and queues the record for the ledger. 200 with the existing record when the person already holds an active one for the hash. 401 when the assertion does not verify or its challenge is unknown, expired or used; 403 for another person's passkey or prepared signature, or a suspended person.
         *
         *     A step of the enrolment or signing page, where a person signs with a passkey: the passkey, in a browser, answers it, so there is no terminal example. docs/persons.md gives the whole sequence.
         */
        post: operations["sign"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/app/records": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The signed-in person's records, newest first (at most 100)
         * @description Needs the session cookie `docverify_session` (401 without one, or after 15 minutes unused).
         *
         *     A step of the enrolment or signing page, where a person signs with a passkey: the passkey, in a browser, answers it, so there is no terminal example. docs/persons.md gives the whole sequence.
         */
        get: operations["listPersonRecords"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        /**
         * The signed-in person's records, newest first (at most 100) (headers only)
         * @description The status and headers the `GET` answers, without its body (to learn whether something exists without downloading it).
         *
         *     Needs the session cookie `docverify_session` (401 without one, or after 15 minutes unused).
         *
         *     A step of the enrolment or signing page, where a person signs with a passkey: the passkey, in a browser, answers it, so there is no terminal example. docs/persons.md gives the whole sequence.
         */
        head: operations["headPersonRecords"];
        patch?: never;
        trace?: never;
    };
    "/app/records/{recordId}/revoke": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Revoke one of the signed-in person's records
         * @description Called from the service's own pages: the request must carry `Origin` equal to the public URL's origin (403 otherwise). Needs the session cookie `docverify_session` (401 without one, or after 15 minutes unused). 403 NOT_REVOCABLE for a record the person did not sign; 409 ALREADY_REVOKED or ANCHOR_NOT_FINAL.
         *
         *     A step of the enrolment or signing page, where a person signs with a passkey: the passkey, in a browser, answers it, so there is no terminal example. docs/persons.md gives the whole sequence.
         */
        post: operations["revokePersonRecord"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
}
export type webhooks = Record<string, never>;
export interface components {
    schemas: {
        /** AppPerson */
        AppPerson: {
            /** Format: uuid */
            id: string;
            name: string;
            /** @description The organisation's registered name */
            organisation: string;
        };
        /**
         * AuthenticationResponseJSON
         * @description A passkey assertion, in the standard WebAuthn JSON form (W3C WebAuthn Level 3, as @simplewebauthn/browser produces and takes it)
         */
        AuthenticationResponseJSON: {
            [key: string]: unknown;
        };
        /** ChecksPerformed */
        ChecksPerformed: {
            /** @enum {string} */
            hashBinding: "pass" | "fail";
            /** @enum {string} */
            userSignature: "pass" | "fail";
            /** @enum {string} */
            serverSeal: "pass" | "fail";
            /** @enum {string} */
            anchorStatus: "pending" | "accepted" | "anchored";
        };
        /**
         * EmptyObject
         * @description `{}`: nothing is read from it
         */
        EmptyObject: {
            [key: string]: unknown;
        };
        /** Enrolled */
        Enrolled: {
            person: components["schemas"]["AppPerson"];
            keyFingerprint: string;
            /** Format: uri */
            signUrl: string;
        };
        /** Error */
        Error: {
            error: {
                /** @description Stable; branch on it. Codes this version answers: `VALIDATION_FAILED`, `UNAUTHENTICATED`, `PAYMENT_REQUIRED`, `ADDON_REQUIRED`, `FORBIDDEN`, `TEST_ENVIRONMENT`, `SCOPE_REQUIRED`, `NOT_REVOCABLE`, `ORGANISATION_SUSPENDED`, `NOT_FOUND`, `METHOD_NOT_ALLOWED`, `ALREADY_REVOKED`, `ANCHOR_NOT_FINAL`, `PAYLOAD_TOO_LARGE`, `RATE_LIMITED`, `INTERNAL_ERROR`, `SERVICE_UNAVAILABLE`. Handle an unknown code by its HTTP status */
                code: string;
                /** @description Human text; changes without notice */
                message: string;
                /** @description On 400: each offending field → one message */
                details?: {
                    [key: string]: string;
                };
            };
        };
        /** Health */
        Health: {
            /** @constant */
            status: "ok";
        };
        /**
         * Identity
         * @description Identity (docs/receipts.md §5)
         */
        Identity: {
            /** @constant */
            v: 1;
            /**
             * Format: uri
             * @description This service's public URL (DOCVERIFY_PUBLIC_URL)
             */
            service: string;
            /** @description Every organisation with a ledger topic, by name (binary order of its UTF-8 bytes), then id */
            organisations: {
                /** Format: uuid */
                orgId: string;
                /** @description The registered name, whole */
                name: string;
                /** @description The organisation's DNS name as its administrator set it (lowercase; an IDN in its xn-- form), carried by its key announcements; null when none is set */
                domain: string | null;
                /** @enum {string} */
                network: "mainnet" | "testnet" | "previewnet" | "local";
                /** @description `0.0.N`: the organisation's own topic */
                topicId: string;
                /** @description The organisation's key and every key announced for it: announced keys in announcement order, then the others; ties by fingerprint */
                keys: {
                    /** @description e.g. `ML-DSA-65` */
                    algorithm: string;
                    /** @description Key fingerprint (docs/signing.md §2), 64 lowercase hex digits */
                    fingerprint: string;
                    /** @description Consensus time (`seconds.nanoseconds`) of the key's announcement on the topic; null until then */
                    announcedAt: string | null;
                    /** @description That announcement's sequence number on the topic, where the key's window starts; null until then */
                    sequenceNumber: number | null;
                    /** @description Present once a key replacing it is announced on the topic: that announcement's consensus time, where the window ends */
                    replacedAt?: string;
                    /** @description That announcement's sequence number */
                    replacedBySequenceNumber?: number;
                    /**
                     * Format: date-time
                     * @description Present once the key is declared compromised: records it signed at or after this time verify as revoked, KEY_COMPROMISE (docs/signing.md "Key lifecycle")
                     */
                    compromisedSince?: string;
                }[];
            }[];
            /** @description The service's seal keys */
            sealKeys: {
                algorithm: string;
                /** @description Key fingerprint (docs/signing.md §2), 64 lowercase hex digits */
                fingerprint: string;
            }[];
        };
        /** ListedRecord */
        ListedRecord: {
            /** Format: uuid */
            recordId: string;
            /**
             * @description `sha256:` and 64 lowercase hex digits
             * @example sha256:2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824
             */
            originalDocHash: string;
            filename: string | null;
            /**
             * Format: date-time
             * @description RFC 3339, UTC
             */
            authenticatedAt: string;
            /** @enum {string} */
            anchorState: "pending" | "accepted" | "anchored";
            /** Format: uri */
            verifyUrl: string;
            revocation: {
                reason: string;
                /**
                 * Format: date-time
                 * @description RFC 3339, UTC
                 */
                revokedAt: string;
            } | null;
        };
        /**
         * Match
         * @description An anchored record for the hash, shaped for the caller's disclosure tier
         */
        Match: {
            /** Format: uuid */
            recordId: string;
            /** @enum {string} */
            kind: "record_only" | "pdf_embedded";
            /** @enum {string} */
            status: "active" | "revoked";
            /**
             * Format: date-time
             * @description RFC 3339, UTC
             */
            recordIssuedAt: string;
            /** @enum {string} */
            signerType: "org" | "user";
            /** @enum {string} */
            signerStanding: "good_standing" | "suspended";
            /** @description Person-signed matches */
            signerHint?: string;
            /** @description Organisation tier only: the signing organisation's registered name, or for a person-signed match the organisation the person signed within */
            signerOrg?: string;
            revocation?: {
                /** @enum {string} */
                reason: "SUPERSEDED" | "ERROR_IN_DOCUMENT" | "KEY_COMPROMISE" | "PRIVILEGE_WITHDRAWN" | "AFFILIATION_CHANGED" | "CESSATION_OF_OPERATION" | "CERTIFICATE_HOLD" | "UNSPECIFIED" | "OTHER";
                /**
                 * Format: date-time
                 * @description RFC 3339, UTC
                 */
                revokedAt: string;
            };
            checksPerformed: components["schemas"]["ChecksPerformed"];
            anchor: components["schemas"]["MatchAnchor"];
        };
        /** MatchAnchor */
        MatchAnchor: {
            /** @description `0.0.N` */
            topicId: string;
            /** @description `<account>@<seconds>.<nanoseconds>`, e.g. `0.0.2@1795507107.624000000`. Mirror nodes and HashScan write it `0.0.2-1795507107-624000000` (docs/clients.md) */
            transactionId: string;
            sequenceNumber: number;
            /**
             * Format: date-time
             * @description RFC 3339, UTC
             */
            consensusAt: string;
            /**
             * Format: uri
             * @description A ready link to the message on a mirror node
             */
            mirrorNodeUrl: string;
        };
        /**
         * Network
         * @enum {string}
         */
        Network: "mainnet" | "testnet" | "previewnet" | "local";
        /** NotReady */
        NotReady: {
            /** @constant */
            status: "not_ready";
            /** @description Each check: `ok`, or why it is not */
            checks: {
                [key: string]: string;
            };
        };
        /** PendingSignature */
        PendingSignature: {
            /** Format: uuid */
            recordId: string;
            /**
             * @description `sha256:` and 64 lowercase hex digits
             * @example sha256:2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824
             */
            originalDocHash: string;
            /**
             * Format: date-time
             * @description The time the record will carry
             */
            signedAt: string;
            /** @description base64url of the exact record payload (docs/signing.md §3) the person's key will sign */
            payload: string;
        };
        /** PersonRecords */
        PersonRecords: {
            records: components["schemas"]["ListedRecord"][];
        };
        /** PersonRevoked */
        PersonRevoked: {
            /** Format: uuid */
            recordId: string;
        };
        /** PersonRevokeRequest */
        PersonRevokeRequest: {
            reason: components["schemas"]["RevocationReason"];
        };
        /** PersonSignedRecord */
        PersonSignedRecord: {
            /** Format: uuid */
            recordId: string;
            /**
             * @description `sha256:` and 64 lowercase hex digits
             * @example sha256:2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824
             */
            originalDocHash: string;
            /**
             * Format: date-time
             * @description RFC 3339, UTC
             */
            authenticatedAt: string;
            /** @enum {string} */
            anchorState: "pending" | "accepted" | "anchored";
            /** Format: uri */
            verifyUrl: string;
            anchor: {
                topicId: string;
                transactionId: string;
                /** Format: uri */
                hashscanUrl: string;
            };
            retryAfterSeconds?: number;
            /** @description The signer's name as enrolled: what the signed PDF's stamp shows */
            signerName: string;
        };
        /**
         * PublicKeyCredentialCreationOptionsJSON
         * @description Options for creating a passkey: user verification and a resident key required, in the standard WebAuthn JSON form (W3C WebAuthn Level 3, as @simplewebauthn/browser produces and takes it)
         */
        PublicKeyCredentialCreationOptionsJSON: {
            [key: string]: unknown;
        };
        /**
         * PublicKeyCredentialRequestOptionsJSON
         * @description Options for a passkey assertion: user verification required, in the standard WebAuthn JSON form (W3C WebAuthn Level 3, as @simplewebauthn/browser produces and takes it)
         */
        PublicKeyCredentialRequestOptionsJSON: {
            [key: string]: unknown;
        };
        /** Ready */
        Ready: {
            /** @constant */
            status: "ready";
            /** @description Each check: `ok`, or why it is not */
            checks: {
                [key: string]: string;
            };
        };
        /**
         * Receipt
         * @description Receipt (docs/receipts.md §2). Properties in this order; byte strings are standard base64 with padding.
         */
        Receipt: {
            /** @constant */
            v: 1;
            /** Format: uuid */
            recordId: string;
            /**
             * @description `sha256:` and 64 lowercase hex digits
             * @example sha256:2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824
             */
            originalDocHash: string;
            /**
             * Format: date-time
             * @description The signed time: RFC 3339 UTC, three fractional digits
             */
            authenticatedAt: string;
            /** @enum {string} */
            kind: "record_only" | "pdf_embedded";
            /** @enum {string} */
            signerType: "org" | "user";
            /** @description The key that signed the record payload */
            signer: components["schemas"]["ReceiptKey"];
            /** @description The service seal key and the seal payload */
            seal: components["schemas"]["ReceiptKey"];
            anchor: components["schemas"]["ReceiptAnchor"];
            /** @description The announcement of `signer`'s key on the same topic */
            keyAnnouncement: {
                topicId: string;
                sequenceNumber: number;
                /** @description Consensus time as mirror nodes write it: `seconds.nanoseconds`, nine digits */
                consensusAt: string;
                /** @description The announcement's exact bytes */
                message: string;
            };
            /** @description As known when issued; the revocation's anchor has null sequence number, consensus time and running hash until consensus */
            revocation: null | {
                reason: components["schemas"]["RevocationReason"];
                /** Format: date-time */
                revokedAt: string;
                anchor: components["schemas"]["ReceiptRevocationAnchor"];
            };
            /** @description Mirror nodes this service suggests (DOCVERIFY_MIRROR_NODES) */
            mirrorNodes: string[];
            /** Format: date-time */
            issuedAt: string;
        };
        /**
         * ReceiptAnchor
         * @description The record's ledger message
         */
        ReceiptAnchor: {
            network: components["schemas"]["Network"];
            /** @description `0.0.N` */
            topicId: string;
            sequenceNumber: number;
            /** @description Consensus time as mirror nodes write it: `seconds.nanoseconds`, nine digits */
            consensusAt: string;
            /** @description `0.0.A@seconds.nanoseconds` */
            transactionId: string;
            /** @description The exact ledger message bytes */
            message: string;
            /** @description The topic's running hash after this message (48 bytes) */
            runningHash: string;
            /** @description Null for a record anchored as its own ledger message; for one anchored in a batch (`message` the batch message), its inclusion proof (docs/receipts.md §2.1) */
            inclusion: null | components["schemas"]["ReceiptInclusion"];
        };
        /** ReceiptInclusion */
        ReceiptInclusion: {
            /** @constant */
            algorithm: "RFC9162-SHA256";
            /** @description The leaf's exact bytes: the record (or revocation) message as it would have been sent alone */
            leafMessage: string;
            /** @description The leaf's 0-based index in the batch's tree */
            leafIndex: number;
            /** @description The tree's number of leaves: the batch message's `size` */
            treeSize: number;
            /** @description The RFC 9162 inclusion path, leaf to root */
            path: string[];
        };
        /** ReceiptKey */
        ReceiptKey: {
            /** @description Registry name, e.g. `ML-DSA-65` */
            algorithm: string;
            /** @description The raw public key */
            publicKey: string;
            /** @description The exact signed bytes (docs/signing.md §3) */
            payload: string;
            /** @description The signature over `payload` */
            signature: string;
        };
        /**
         * ReceiptRevocationAnchor
         * @description The revocation's ledger message; sequence number, consensus time and running hash are null until consensus
         */
        ReceiptRevocationAnchor: {
            network: components["schemas"]["Network"];
            /** @description `0.0.N` */
            topicId: string;
            sequenceNumber: number | null;
            consensusAt: string | null;
            /** @description `0.0.A@seconds.nanoseconds` */
            transactionId: string;
            /** @description The exact ledger message bytes */
            message: string;
            runningHash: string | null;
            /** @description Null for a record anchored as its own ledger message; for one anchored in a batch (`message` the batch message), its inclusion proof (docs/receipts.md §2.1) */
            inclusion: null | components["schemas"]["ReceiptInclusion"];
        };
        /** Record */
        Record: {
            /** Format: uuid */
            recordId: string;
            /**
             * @description `sha256:` and 64 lowercase hex digits
             * @example sha256:2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824
             */
            originalDocHash: string;
            /**
             * Format: date-time
             * @description The signed time (RFC 3339, UTC, milliseconds), not the consensus time
             */
            authenticatedAt: string;
            /** @enum {string} */
            anchorState: "pending" | "accepted" | "anchored";
            /**
             * Format: uri
             * @description Public verification page; needs no credential and shows the filename
             */
            verifyUrl: string;
            anchor: components["schemas"]["RecordAnchor"];
            /** @description Present while `anchorState` is not `anchored` */
            retryAfterSeconds?: number;
        };
        /**
         * RecordAnchor
         * @description Where the record's ledger message goes
         */
        RecordAnchor: {
            /** @description The organisation's own ledger topic, e.g. 0.0.1234 */
            topicId: string;
            /** @description `<account>@<seconds>.<nanoseconds>`, e.g. `0.0.2@1795507107.624000000`. Mirror nodes and HashScan write it `0.0.2-1795507107-624000000` (docs/clients.md) */
            transactionId: string;
            /**
             * Format: uri
             * @description Public ledger explorer page; resolves after consensus
             */
            hashscanUrl: string;
        };
        /**
         * RecordRequest
         * @description Unknown properties (an orgId, a credentialId) are ignored: tenancy comes from the credential.
         */
        RecordRequest: {
            /**
             * @description `sha256:` and 64 lowercase hex digits
             * @example sha256:2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824
             */
            originalDocHash: string;
            /** @description Public metadata shown on the verify page; never signed or put on the ledger. 1–500 code points; control and invisible formatting characters are refused except U+200C and U+200D, and so are characters that show as nothing (Hangul fillers, the braille blank…), line and paragraph separators, spaces other than U+0020, U+00A0 and U+202F, and white space at either end (docs/records.md). Stored exactly as sent. */
            filename?: string;
        };
        /**
         * RegistrationResponseJSON
         * @description The new passkey's registration, in the standard WebAuthn JSON form (W3C WebAuthn Level 3, as @simplewebauthn/browser produces and takes it)
         */
        RegistrationResponseJSON: {
            [key: string]: unknown;
        };
        /**
         * RevocationReason
         * @enum {string}
         */
        RevocationReason: "SUPERSEDED" | "ERROR_IN_DOCUMENT" | "KEY_COMPROMISE" | "PRIVILEGE_WITHDRAWN" | "AFFILIATION_CHANGED" | "CESSATION_OF_OPERATION" | "CERTIFICATE_HOLD" | "UNSPECIFIED" | "OTHER";
        /** Revoked */
        Revoked: {
            /** Format: uuid */
            recordId: string;
        };
        /** RevokeRequest */
        RevokeRequest: {
            reason: components["schemas"]["RevocationReason"];
        };
        /**
         * SignatureOptions
         * @description PublicKeyCredentialRequestOptionsJSON, with the record it commits to
         */
        SignatureOptions: {
            /** @description base64url of SHA-256 of `docverify.payload`: the assertion authorises exactly that record */
            challenge: string;
            docverify: components["schemas"]["PendingSignature"];
        } & {
            [key: string]: unknown;
        };
        /** SignatureRequest */
        SignatureRequest: {
            /**
             * @description `sha256:` and 64 lowercase hex digits
             * @example sha256:2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824
             */
            originalDocHash: string;
            /** @description Shown on the verify page; never signed or put on the ledger */
            filename?: string;
        };
        /** SignedIn */
        SignedIn: {
            person: components["schemas"]["AppPerson"];
        };
        /**
         * Verification
         * @description A verification's answer
         */
        Verification: {
            /**
             * Format: uuid
             * @description Organisation tier only
             */
            verificationId?: string;
            /** @enum {string} */
            verdict: "verified" | "verified_org" | "revoked" | "signature_invalid" | "pending_anchor" | "no_record";
            /** @enum {string} */
            disclosureTier: "public" | "organisation";
            /** @constant */
            assuranceLevel: "docverify.registry.v1";
            /**
             * @description `partial` in this version of the API; its values may change in a later one: read it, do not hardcode it
             * @example partial
             */
            mode: string;
            /** @enum {string} */
            environment?: "live" | "test";
            /**
             * @description `sha256:` and 64 lowercase hex digits
             * @example sha256:2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824
             */
            originalDocHash: string;
            /**
             * Format: date-time
             * @description RFC 3339, UTC
             */
            verifiedAt: string;
            /** @description Echoed at the organisation tier when supplied */
            reference?: string;
            /** @description Anchored records for the hash, earliest consensus first, at most 100; the verdict is decided over every record, returned or not */
            matches: components["schemas"]["Match"][];
            /** @description With `pending_anchor`: when to ask again */
            retryAfterSeconds?: number;
        };
        /** VerificationPage */
        VerificationPage: {
            data: components["schemas"]["VerificationSummary"][];
            pagination: {
                /** @description Pass as `after` for the next page; null on the last page */
                nextCursor: string | null;
                hasMore: boolean;
            };
        };
        /** VerificationRequest */
        VerificationRequest: {
            /**
             * @description `sha256:` and 64 lowercase hex digits
             * @example sha256:2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824
             */
            originalDocHash: string;
            /** @description No control characters; echoed and logged at the organisation tier only */
            reference?: string;
        };
        /**
         * VerificationSummary
         * @description A row of the verification log
         */
        VerificationSummary: {
            /** Format: uuid */
            verificationId: string;
            /** @enum {string} */
            verdict: "verified" | "verified_org" | "revoked" | "signature_invalid" | "pending_anchor" | "no_record";
            /** @example docverify.registry.v1 */
            assuranceLevel: string;
            /**
             * @description `partial` in this version of the API; its values may change in a later one: read it, do not hardcode it
             * @example partial
             */
            mode: string;
            /** @enum {string} */
            environment: "live" | "test";
            /**
             * @description `sha256:` and 64 lowercase hex digits
             * @example sha256:2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824
             */
            originalDocHash: string;
            /**
             * Format: date-time
             * @description RFC 3339, UTC
             */
            verifiedAt: string;
            reference?: string;
        };
    };
    responses: never;
    parameters: never;
    requestBodies: never;
    headers: {
        /** @description `*`: a page on any origin may read this public document (the receipt verifier's page confirms an organisation's domain with it) */
        "Access-Control-Allow-Origin": "*";
        /** @description This request's id, also in the service's log line for it */
        "X-Request-Id": string;
        /** @description The tightest rate limit that applied to this request (requests per window). Absent when the request was answered before any limit was consulted (405, a body over 1 MiB, shutting down) */
        "X-RateLimit-Limit": number;
        /** @description Requests left in that limit's window */
        "X-RateLimit-Remaining": number;
        /** @description Seconds to wait before retrying */
        "Retry-After": number;
        /** @description Seconds to wait before retrying */
        "Retry-After-Required": number;
        /** @description The methods the path accepts, e.g. `GET, HEAD` */
        Allow: string;
    };
    pathItems: never;
}
export type $defs = Record<string, never>;
export interface operations {
    getHealth: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The process answers */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Health"];
                };
            };
            /** @description METHOD_NOT_ALLOWED: the path does not accept the request's method; `Allow` lists those it does */
            405: {
                headers: {
                    Allow: components["headers"]["Allow"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    headHealth: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The process answers */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description METHOD_NOT_ALLOWED: the path does not accept the request's method; `Allow` lists those it does */
            405: {
                headers: {
                    Allow: components["headers"]["Allow"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content?: never;
            };
        };
    };
    getReadiness: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Every check passes */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Ready"];
                };
            };
            /** @description METHOD_NOT_ALLOWED: the path does not accept the request's method; `Allow` lists those it does */
            405: {
                headers: {
                    Allow: components["headers"]["Allow"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not ready; `checks` names what failed (with `Retry-After`) */
            503: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "Retry-After": components["headers"]["Retry-After"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["NotReady"];
                };
            };
        };
    };
    headReadiness: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Every check passes */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description METHOD_NOT_ALLOWED: the path does not accept the request's method; `Allow` lists those it does */
            405: {
                headers: {
                    Allow: components["headers"]["Allow"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Not ready; `checks` names what failed (with `Retry-After`) */
            503: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "Retry-After": components["headers"]["Retry-After"];
                    [name: string]: unknown;
                };
                content?: never;
            };
        };
    };
    listVerifications: {
        parameters: {
            query?: {
                verdict?: "verified" | "verified_org" | "revoked" | "signature_invalid" | "pending_anchor" | "no_record";
                originalDocHash?: string;
                from?: string;
                to?: string;
                /** @description 1–100, written in digits without sign or leading zero (`05`, `+5`, `5.0` are refused with 400) */
                limit?: number;
                /** @description The previous page's `pagination.nextCursor` */
                after?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Response for status 200 */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["VerificationPage"];
                };
            };
            /** @description Malformed request; `error.details` names each offending field */
            400: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Credential missing where required, or unusable: malformed, unknown, revoked or expired (cause not distinguished) */
            401: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description PAYMENT_REQUIRED: API access off; ADDON_REQUIRED: the organisation lacks the add-on */
            402: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description FORBIDDEN (Origin header, or no verifications:read), TEST_ENVIRONMENT, SCOPE_REQUIRED, NOT_REVOCABLE */
            403: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description METHOD_NOT_ALLOWED: the path does not accept the request's method; `Allow` lists those it does */
            405: {
                headers: {
                    Allow: components["headers"]["Allow"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description RATE_LIMITED; wait `Retry-After` seconds */
            429: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "Retry-After": components["headers"]["Retry-After-Required"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Failure on the service side; nothing was modified */
            500: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description SERVICE_UNAVAILABLE; retry after `Retry-After` seconds */
            503: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "Retry-After": components["headers"]["Retry-After"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    verifyDocument: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** @description JSON, at most 4,096 bytes (a larger body is refused with 413 PAYLOAD_TOO_LARGE) */
        requestBody: {
            content: {
                "application/json": components["schemas"]["VerificationRequest"];
            };
        };
        responses: {
            /** @description Response for status 200 */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Verification"];
                };
            };
            /** @description Malformed request; `error.details` names each offending field */
            400: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Credential missing where required, or unusable: malformed, unknown, revoked or expired (cause not distinguished) */
            401: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description PAYMENT_REQUIRED: API access off; ADDON_REQUIRED: the organisation lacks the add-on */
            402: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description FORBIDDEN (Origin header, or no verifications:read), TEST_ENVIRONMENT, SCOPE_REQUIRED, NOT_REVOCABLE */
            403: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description METHOD_NOT_ALLOWED: the path does not accept the request's method; `Allow` lists those it does */
            405: {
                headers: {
                    Allow: components["headers"]["Allow"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Body over the operation's limit */
            413: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description RATE_LIMITED; wait `Retry-After` seconds */
            429: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "Retry-After": components["headers"]["Retry-After-Required"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Failure on the service side; nothing was modified */
            500: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description SERVICE_UNAVAILABLE; retry after `Retry-After` seconds */
            503: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "Retry-After": components["headers"]["Retry-After"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    headVerifications: {
        parameters: {
            query?: {
                verdict?: "verified" | "verified_org" | "revoked" | "signature_invalid" | "pending_anchor" | "no_record";
                originalDocHash?: string;
                from?: string;
                to?: string;
                /** @description 1–100, written in digits without sign or leading zero (`05`, `+5`, `5.0` are refused with 400) */
                limit?: number;
                /** @description The previous page's `pagination.nextCursor` */
                after?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Response for status 200 */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Malformed request; `error.details` names each offending field */
            400: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Credential missing where required, or unusable: malformed, unknown, revoked or expired (cause not distinguished) */
            401: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description PAYMENT_REQUIRED: API access off; ADDON_REQUIRED: the organisation lacks the add-on */
            402: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description FORBIDDEN (Origin header, or no verifications:read), TEST_ENVIRONMENT, SCOPE_REQUIRED, NOT_REVOCABLE */
            403: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description METHOD_NOT_ALLOWED: the path does not accept the request's method; `Allow` lists those it does */
            405: {
                headers: {
                    Allow: components["headers"]["Allow"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description RATE_LIMITED; wait `Retry-After` seconds */
            429: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "Retry-After": components["headers"]["Retry-After-Required"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Failure on the service side; nothing was modified */
            500: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description SERVICE_UNAVAILABLE; retry after `Retry-After` seconds */
            503: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "Retry-After": components["headers"]["Retry-After"];
                    [name: string]: unknown;
                };
                content?: never;
            };
        };
    };
    getVerification: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description A UUID; a malformed one is answered like an unknown one (404) */
                verificationId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Response for status 200 */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Verification"];
                };
            };
            /** @description Credential missing where required, or unusable: malformed, unknown, revoked or expired (cause not distinguished) */
            401: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description PAYMENT_REQUIRED: API access off; ADDON_REQUIRED: the organisation lacks the add-on */
            402: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description FORBIDDEN (Origin header, or no verifications:read), TEST_ENVIRONMENT, SCOPE_REQUIRED, NOT_REVOCABLE */
            403: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found for this organisation and environment (causes not distinguished) */
            404: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description METHOD_NOT_ALLOWED: the path does not accept the request's method; `Allow` lists those it does */
            405: {
                headers: {
                    Allow: components["headers"]["Allow"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description RATE_LIMITED; wait `Retry-After` seconds */
            429: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "Retry-After": components["headers"]["Retry-After-Required"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Failure on the service side; nothing was modified */
            500: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description SERVICE_UNAVAILABLE; retry after `Retry-After` seconds */
            503: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "Retry-After": components["headers"]["Retry-After"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    headVerification: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description A UUID; a malformed one is answered like an unknown one (404) */
                verificationId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Response for status 200 */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Credential missing where required, or unusable: malformed, unknown, revoked or expired (cause not distinguished) */
            401: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description PAYMENT_REQUIRED: API access off; ADDON_REQUIRED: the organisation lacks the add-on */
            402: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description FORBIDDEN (Origin header, or no verifications:read), TEST_ENVIRONMENT, SCOPE_REQUIRED, NOT_REVOCABLE */
            403: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Not found for this organisation and environment (causes not distinguished) */
            404: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description METHOD_NOT_ALLOWED: the path does not accept the request's method; `Allow` lists those it does */
            405: {
                headers: {
                    Allow: components["headers"]["Allow"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description RATE_LIMITED; wait `Retry-After` seconds */
            429: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "Retry-After": components["headers"]["Retry-After-Required"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Failure on the service side; nothing was modified */
            500: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description SERVICE_UNAVAILABLE; retry after `Retry-After` seconds */
            503: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "Retry-After": components["headers"]["Retry-After"];
                    [name: string]: unknown;
                };
                content?: never;
            };
        };
    };
    createRecord: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** @description JSON, at most 8,192 bytes (a larger body is refused with 413 PAYLOAD_TOO_LARGE) */
        requestBody: {
            content: {
                "application/json": components["schemas"]["RecordRequest"];
            };
        };
        responses: {
            /** @description The organisation already holds an active record for this hash; nothing was created */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Record"];
                };
            };
            /** @description Record created and durable; its ledger message is queued */
            201: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Record"];
                };
            };
            /** @description Malformed request; `error.details` names each offending field */
            400: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Credential missing where required, or unusable: malformed, unknown, revoked or expired (cause not distinguished) */
            401: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description PAYMENT_REQUIRED: API access off; ADDON_REQUIRED: the organisation lacks the add-on */
            402: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description FORBIDDEN (Origin header, or no verifications:read), TEST_ENVIRONMENT, SCOPE_REQUIRED (records:write), ORGANISATION_SUSPENDED (an administrator has suspended the organisation; its keys still verify and revoke) */
            403: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description METHOD_NOT_ALLOWED: the path does not accept the request's method; `Allow` lists those it does */
            405: {
                headers: {
                    Allow: components["headers"]["Allow"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Body over the operation's limit */
            413: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description RATE_LIMITED; wait `Retry-After` seconds */
            429: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "Retry-After": components["headers"]["Retry-After-Required"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Failure on the service side; nothing was modified */
            500: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description SERVICE_UNAVAILABLE; retry after `Retry-After` seconds */
            503: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "Retry-After": components["headers"]["Retry-After"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    revokeRecord: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description A UUID; a malformed one is answered like an unknown one (404) */
                recordId: string;
            };
            cookie?: never;
        };
        /** @description JSON, at most 4,096 bytes (a larger body is refused with 413 PAYLOAD_TOO_LARGE) */
        requestBody: {
            content: {
                "application/json": components["schemas"]["RevokeRequest"];
            };
        };
        responses: {
            /** @description Revoked; the decision has been queued for the ledger */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Revoked"];
                };
            };
            /** @description Malformed request; `error.details` names each offending field */
            400: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Credential missing where required, or unusable: malformed, unknown, revoked or expired (cause not distinguished) */
            401: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description PAYMENT_REQUIRED: API access off; ADDON_REQUIRED: the organisation lacks the add-on */
            402: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description FORBIDDEN (Origin header, or no verifications:read), TEST_ENVIRONMENT, SCOPE_REQUIRED, NOT_REVOCABLE */
            403: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found for this organisation and environment (causes not distinguished) */
            404: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description METHOD_NOT_ALLOWED: the path does not accept the request's method; `Allow` lists those it does */
            405: {
                headers: {
                    Allow: components["headers"]["Allow"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description ALREADY_REVOKED or ANCHOR_NOT_FINAL */
            409: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "Retry-After": components["headers"]["Retry-After"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Body over the operation's limit */
            413: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description RATE_LIMITED; wait `Retry-After` seconds */
            429: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "Retry-After": components["headers"]["Retry-After-Required"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Failure on the service side; nothing was modified */
            500: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description SERVICE_UNAVAILABLE; retry after `Retry-After` seconds */
            503: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "Retry-After": components["headers"]["Retry-After"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getVerifyPage: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description A UUID; a malformed one is answered like an unknown one (404) */
                recordId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The record's page */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "text/html": string;
                };
            };
            /** @description No such record */
            404: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "text/html": string;
                };
            };
            /** @description METHOD_NOT_ALLOWED: the path does not accept the request's method; `Allow` lists those it does */
            405: {
                headers: {
                    Allow: components["headers"]["Allow"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    headVerifyPage: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description A UUID; a malformed one is answered like an unknown one (404) */
                recordId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The record's page */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description No such record */
            404: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description METHOD_NOT_ALLOWED: the path does not accept the request's method; `Allow` lists those it does */
            405: {
                headers: {
                    Allow: components["headers"]["Allow"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content?: never;
            };
        };
    };
    getReceiptVerifierPage: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The page */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    [name: string]: unknown;
                };
                content: {
                    "text/html": string;
                };
            };
            /** @description METHOD_NOT_ALLOWED: the path does not accept the request's method; `Allow` lists those it does */
            405: {
                headers: {
                    Allow: components["headers"]["Allow"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests from this client's address (the anonymous tier's limit); error envelope `RATE_LIMITED` */
            429: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "Retry-After": components["headers"]["Retry-After-Required"];
                    [name: string]: unknown;
                };
                content?: never;
            };
        };
    };
    headReceiptVerifierPage: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The page */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description METHOD_NOT_ALLOWED: the path does not accept the request's method; `Allow` lists those it does */
            405: {
                headers: {
                    Allow: components["headers"]["Allow"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Too many requests from this client's address (the anonymous tier's limit); error envelope `RATE_LIMITED` */
            429: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "Retry-After": components["headers"]["Retry-After-Required"];
                    [name: string]: unknown;
                };
                content?: never;
            };
        };
    };
    getRecordReceipt: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description A UUID; a malformed one is answered like an unknown one (404) */
                recordId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The receipt, as a download (`Content-Disposition: attachment; filename="docverify-receipt-<recordId>.json"`, `Cache-Control: no-store`) */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    [name: string]: unknown;
                };
                content: {
                    "application/vnd.docverify.receipt+json": components["schemas"]["Receipt"];
                };
            };
            /** @description Credential missing where required, or unusable: malformed, unknown, revoked or expired (cause not distinguished) */
            401: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description PAYMENT_REQUIRED: API access off; ADDON_REQUIRED: the organisation lacks the add-on */
            402: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description FORBIDDEN (Origin header, or no verifications:read), TEST_ENVIRONMENT, SCOPE_REQUIRED, NOT_REVOCABLE */
            403: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description NOT_FOUND: unknown, malformed, abandoned or another organisation's record (not distinguished) */
            404: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description METHOD_NOT_ALLOWED: the path does not accept the request's method; `Allow` lists those it does */
            405: {
                headers: {
                    Allow: components["headers"]["Allow"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description ANCHOR_NOT_FINAL: the record's message or its organisation's key announcement has not reached consensus; retry after `Retry-After` seconds */
            409: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "Retry-After": components["headers"]["Retry-After"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description RATE_LIMITED; wait `Retry-After` seconds */
            429: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "Retry-After": components["headers"]["Retry-After-Required"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Failure on the service side; nothing was modified */
            500: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description SERVICE_UNAVAILABLE; retry after `Retry-After` seconds */
            503: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "Retry-After": components["headers"]["Retry-After"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    headRecordReceipt: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description A UUID; a malformed one is answered like an unknown one (404) */
                recordId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The receipt, as a download (`Content-Disposition: attachment; filename="docverify-receipt-<recordId>.json"`, `Cache-Control: no-store`) */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Credential missing where required, or unusable: malformed, unknown, revoked or expired (cause not distinguished) */
            401: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description PAYMENT_REQUIRED: API access off; ADDON_REQUIRED: the organisation lacks the add-on */
            402: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description FORBIDDEN (Origin header, or no verifications:read), TEST_ENVIRONMENT, SCOPE_REQUIRED, NOT_REVOCABLE */
            403: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description NOT_FOUND: unknown, malformed, abandoned or another organisation's record (not distinguished) */
            404: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description METHOD_NOT_ALLOWED: the path does not accept the request's method; `Allow` lists those it does */
            405: {
                headers: {
                    Allow: components["headers"]["Allow"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description ANCHOR_NOT_FINAL: the record's message or its organisation's key announcement has not reached consensus; retry after `Retry-After` seconds */
            409: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "Retry-After": components["headers"]["Retry-After"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description RATE_LIMITED; wait `Retry-After` seconds */
            429: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "Retry-After": components["headers"]["Retry-After-Required"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Failure on the service side; nothing was modified */
            500: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description SERVICE_UNAVAILABLE; retry after `Retry-After` seconds */
            503: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "Retry-After": components["headers"]["Retry-After"];
                    [name: string]: unknown;
                };
                content?: never;
            };
        };
    };
    getPublicReceipt: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description A UUID; a malformed one is answered like an unknown one (404) */
                recordId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The receipt, as a download (`Content-Disposition: attachment; filename="docverify-receipt-<recordId>.json"`, `Cache-Control: no-store`) */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    [name: string]: unknown;
                };
                content: {
                    "application/vnd.docverify.receipt+json": components["schemas"]["Receipt"];
                };
            };
            /** @description NOT_FOUND: unknown, malformed or abandoned record (not distinguished) */
            404: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description METHOD_NOT_ALLOWED: the path does not accept the request's method; `Allow` lists those it does */
            405: {
                headers: {
                    Allow: components["headers"]["Allow"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description ANCHOR_NOT_FINAL: the record's message or its organisation's key announcement has not reached consensus; retry after `Retry-After` seconds */
            409: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "Retry-After": components["headers"]["Retry-After"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description RATE_LIMITED; wait `Retry-After` seconds */
            429: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "Retry-After": components["headers"]["Retry-After-Required"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Failure on the service side; nothing was modified */
            500: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description SERVICE_UNAVAILABLE; retry after `Retry-After` seconds */
            503: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "Retry-After": components["headers"]["Retry-After"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    headPublicReceipt: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description A UUID; a malformed one is answered like an unknown one (404) */
                recordId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The receipt, as a download (`Content-Disposition: attachment; filename="docverify-receipt-<recordId>.json"`, `Cache-Control: no-store`) */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description NOT_FOUND: unknown, malformed or abandoned record (not distinguished) */
            404: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description METHOD_NOT_ALLOWED: the path does not accept the request's method; `Allow` lists those it does */
            405: {
                headers: {
                    Allow: components["headers"]["Allow"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description ANCHOR_NOT_FINAL: the record's message or its organisation's key announcement has not reached consensus; retry after `Retry-After` seconds */
            409: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "Retry-After": components["headers"]["Retry-After"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description RATE_LIMITED; wait `Retry-After` seconds */
            429: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "Retry-After": components["headers"]["Retry-After-Required"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Failure on the service side; nothing was modified */
            500: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description SERVICE_UNAVAILABLE; retry after `Retry-After` seconds */
            503: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "Retry-After": components["headers"]["Retry-After"];
                    [name: string]: unknown;
                };
                content?: never;
            };
        };
    };
    getIdentity: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Response for status 200 */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Identity"];
                };
            };
            /** @description METHOD_NOT_ALLOWED: the path does not accept the request's method; `Allow` lists those it does */
            405: {
                headers: {
                    Allow: components["headers"]["Allow"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description RATE_LIMITED; wait `Retry-After` seconds */
            429: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Retry-After": components["headers"]["Retry-After-Required"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Failure on the service side; nothing was modified */
            500: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description SERVICE_UNAVAILABLE; retry after `Retry-After` seconds */
            503: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Retry-After": components["headers"]["Retry-After"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    headIdentity: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Response for status 200 */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description METHOD_NOT_ALLOWED: the path does not accept the request's method; `Allow` lists those it does */
            405: {
                headers: {
                    Allow: components["headers"]["Allow"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description RATE_LIMITED; wait `Retry-After` seconds */
            429: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Retry-After": components["headers"]["Retry-After-Required"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Failure on the service side; nothing was modified */
            500: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description SERVICE_UNAVAILABLE; retry after `Retry-After` seconds */
            503: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Retry-After": components["headers"]["Retry-After"];
                    [name: string]: unknown;
                };
                content?: never;
            };
        };
    };
    enrolmentOptions: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                token: string;
            };
            cookie?: never;
        };
        /** @description JSON, at most 32,768 bytes (a larger body is refused with 413 PAYLOAD_TOO_LARGE) */
        requestBody: {
            content: {
                "application/json": components["schemas"]["EmptyObject"];
            };
        };
        responses: {
            /** @description Response for status 200 */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicKeyCredentialCreationOptionsJSON"];
                };
            };
            /** @description Malformed request; `error.details` names each offending field */
            400: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description PAYMENT_REQUIRED: API access off; ADDON_REQUIRED: the organisation lacks the add-on */
            402: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description FORBIDDEN (Origin header, or no verifications:read), TEST_ENVIRONMENT, SCOPE_REQUIRED, NOT_REVOCABLE */
            403: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found for this organisation and environment (causes not distinguished) */
            404: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description METHOD_NOT_ALLOWED: the path does not accept the request's method; `Allow` lists those it does */
            405: {
                headers: {
                    Allow: components["headers"]["Allow"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Body over the operation's limit */
            413: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description RATE_LIMITED; wait `Retry-After` seconds */
            429: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "Retry-After": components["headers"]["Retry-After-Required"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Failure on the service side; nothing was modified */
            500: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description SERVICE_UNAVAILABLE; retry after `Retry-After` seconds */
            503: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "Retry-After": components["headers"]["Retry-After"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    enrol: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                token: string;
            };
            cookie?: never;
        };
        /** @description JSON, at most 32,768 bytes (a larger body is refused with 413 PAYLOAD_TOO_LARGE) */
        requestBody: {
            content: {
                "application/json": components["schemas"]["RegistrationResponseJSON"];
            };
        };
        responses: {
            /** @description Response for status 201 */
            201: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Enrolled"];
                };
            };
            /** @description Malformed request; `error.details` names each offending field */
            400: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Credential missing where required, or unusable: malformed, unknown, revoked or expired (cause not distinguished) */
            401: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description PAYMENT_REQUIRED: API access off; ADDON_REQUIRED: the organisation lacks the add-on */
            402: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description FORBIDDEN (Origin header, or no verifications:read), TEST_ENVIRONMENT, SCOPE_REQUIRED, NOT_REVOCABLE */
            403: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found for this organisation and environment (causes not distinguished) */
            404: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description METHOD_NOT_ALLOWED: the path does not accept the request's method; `Allow` lists those it does */
            405: {
                headers: {
                    Allow: components["headers"]["Allow"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Body over the operation's limit */
            413: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description RATE_LIMITED; wait `Retry-After` seconds */
            429: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "Retry-After": components["headers"]["Retry-After-Required"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Failure on the service side; nothing was modified */
            500: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description SERVICE_UNAVAILABLE; retry after `Retry-After` seconds */
            503: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "Retry-After": components["headers"]["Retry-After"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    sessionOptions: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** @description JSON, at most 32,768 bytes (a larger body is refused with 413 PAYLOAD_TOO_LARGE) */
        requestBody: {
            content: {
                "application/json": components["schemas"]["EmptyObject"];
            };
        };
        responses: {
            /** @description Response for status 200 */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicKeyCredentialRequestOptionsJSON"];
                };
            };
            /** @description Malformed request; `error.details` names each offending field */
            400: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description FORBIDDEN (Origin header, or no verifications:read), TEST_ENVIRONMENT, SCOPE_REQUIRED, NOT_REVOCABLE */
            403: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description METHOD_NOT_ALLOWED: the path does not accept the request's method; `Allow` lists those it does */
            405: {
                headers: {
                    Allow: components["headers"]["Allow"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Body over the operation's limit */
            413: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description RATE_LIMITED; wait `Retry-After` seconds */
            429: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "Retry-After": components["headers"]["Retry-After-Required"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Failure on the service side; nothing was modified */
            500: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description SERVICE_UNAVAILABLE; retry after `Retry-After` seconds */
            503: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "Retry-After": components["headers"]["Retry-After"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getSession: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Response for status 200 */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["SignedIn"];
                };
            };
            /** @description Credential missing where required, or unusable: malformed, unknown, revoked or expired (cause not distinguished) */
            401: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description METHOD_NOT_ALLOWED: the path does not accept the request's method; `Allow` lists those it does */
            405: {
                headers: {
                    Allow: components["headers"]["Allow"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Failure on the service side; nothing was modified */
            500: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    signIn: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** @description JSON, at most 32,768 bytes (a larger body is refused with 413 PAYLOAD_TOO_LARGE) */
        requestBody: {
            content: {
                "application/json": components["schemas"]["AuthenticationResponseJSON"];
            };
        };
        responses: {
            /** @description Response for status 200 */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["SignedIn"];
                };
            };
            /** @description Malformed request; `error.details` names each offending field */
            400: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Credential missing where required, or unusable: malformed, unknown, revoked or expired (cause not distinguished) */
            401: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description FORBIDDEN (Origin header, or no verifications:read), TEST_ENVIRONMENT, SCOPE_REQUIRED, NOT_REVOCABLE */
            403: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description METHOD_NOT_ALLOWED: the path does not accept the request's method; `Allow` lists those it does */
            405: {
                headers: {
                    Allow: components["headers"]["Allow"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Body over the operation's limit */
            413: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description RATE_LIMITED; wait `Retry-After` seconds */
            429: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "Retry-After": components["headers"]["Retry-After-Required"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Failure on the service side; nothing was modified */
            500: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description SERVICE_UNAVAILABLE; retry after `Retry-After` seconds */
            503: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "Retry-After": components["headers"]["Retry-After"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    signOut: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Signed out; the cookie is cleared */
            204: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description FORBIDDEN (Origin header, or no verifications:read), TEST_ENVIRONMENT, SCOPE_REQUIRED, NOT_REVOCABLE */
            403: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description METHOD_NOT_ALLOWED: the path does not accept the request's method; `Allow` lists those it does */
            405: {
                headers: {
                    Allow: components["headers"]["Allow"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Failure on the service side; nothing was modified */
            500: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    headSession: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Response for status 200 */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Credential missing where required, or unusable: malformed, unknown, revoked or expired (cause not distinguished) */
            401: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description METHOD_NOT_ALLOWED: the path does not accept the request's method; `Allow` lists those it does */
            405: {
                headers: {
                    Allow: components["headers"]["Allow"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Failure on the service side; nothing was modified */
            500: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    [name: string]: unknown;
                };
                content?: never;
            };
        };
    };
    signatureOptions: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** @description JSON, at most 32,768 bytes (a larger body is refused with 413 PAYLOAD_TOO_LARGE) */
        requestBody: {
            content: {
                "application/json": components["schemas"]["SignatureRequest"];
            };
        };
        responses: {
            /** @description Response for status 200 */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["SignatureOptions"];
                };
            };
            /** @description Malformed request; `error.details` names each offending field */
            400: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Credential missing where required, or unusable: malformed, unknown, revoked or expired (cause not distinguished) */
            401: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description PAYMENT_REQUIRED: API access off; ADDON_REQUIRED: the organisation lacks the add-on */
            402: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description FORBIDDEN (Origin header, or no verifications:read), TEST_ENVIRONMENT, SCOPE_REQUIRED, NOT_REVOCABLE */
            403: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description METHOD_NOT_ALLOWED: the path does not accept the request's method; `Allow` lists those it does */
            405: {
                headers: {
                    Allow: components["headers"]["Allow"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Body over the operation's limit */
            413: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Failure on the service side; nothing was modified */
            500: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description SERVICE_UNAVAILABLE; retry after `Retry-After` seconds */
            503: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "Retry-After": components["headers"]["Retry-After"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    sign: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** @description JSON, at most 32,768 bytes (a larger body is refused with 413 PAYLOAD_TOO_LARGE) */
        requestBody: {
            content: {
                "application/json": components["schemas"]["AuthenticationResponseJSON"];
            };
        };
        responses: {
            /** @description Response for status 200 */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PersonSignedRecord"];
                };
            };
            /** @description Response for status 201 */
            201: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PersonSignedRecord"];
                };
            };
            /** @description Malformed request; `error.details` names each offending field */
            400: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Credential missing where required, or unusable: malformed, unknown, revoked or expired (cause not distinguished) */
            401: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description PAYMENT_REQUIRED: API access off; ADDON_REQUIRED: the organisation lacks the add-on */
            402: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description FORBIDDEN (Origin header, or no verifications:read), TEST_ENVIRONMENT, SCOPE_REQUIRED, NOT_REVOCABLE */
            403: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description METHOD_NOT_ALLOWED: the path does not accept the request's method; `Allow` lists those it does */
            405: {
                headers: {
                    Allow: components["headers"]["Allow"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Body over the operation's limit */
            413: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Failure on the service side; nothing was modified */
            500: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description SERVICE_UNAVAILABLE; retry after `Retry-After` seconds */
            503: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "Retry-After": components["headers"]["Retry-After"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    listPersonRecords: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Response for status 200 */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PersonRecords"];
                };
            };
            /** @description Credential missing where required, or unusable: malformed, unknown, revoked or expired (cause not distinguished) */
            401: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description METHOD_NOT_ALLOWED: the path does not accept the request's method; `Allow` lists those it does */
            405: {
                headers: {
                    Allow: components["headers"]["Allow"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Failure on the service side; nothing was modified */
            500: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    headPersonRecords: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Response for status 200 */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Credential missing where required, or unusable: malformed, unknown, revoked or expired (cause not distinguished) */
            401: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description METHOD_NOT_ALLOWED: the path does not accept the request's method; `Allow` lists those it does */
            405: {
                headers: {
                    Allow: components["headers"]["Allow"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Failure on the service side; nothing was modified */
            500: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content?: never;
            };
        };
    };
    revokePersonRecord: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description A UUID; a malformed one is answered like an unknown one (404) */
                recordId: string;
            };
            cookie?: never;
        };
        /** @description JSON, at most 32,768 bytes (a larger body is refused with 413 PAYLOAD_TOO_LARGE) */
        requestBody: {
            content: {
                "application/json": components["schemas"]["PersonRevokeRequest"];
            };
        };
        responses: {
            /** @description Response for status 200 */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PersonRevoked"];
                };
            };
            /** @description Malformed request; `error.details` names each offending field */
            400: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Credential missing where required, or unusable: malformed, unknown, revoked or expired (cause not distinguished) */
            401: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description FORBIDDEN (Origin header, or no verifications:read), TEST_ENVIRONMENT, SCOPE_REQUIRED, NOT_REVOCABLE */
            403: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found for this organisation and environment (causes not distinguished) */
            404: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description METHOD_NOT_ALLOWED: the path does not accept the request's method; `Allow` lists those it does */
            405: {
                headers: {
                    Allow: components["headers"]["Allow"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description ALREADY_REVOKED or ANCHOR_NOT_FINAL */
            409: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "Retry-After": components["headers"]["Retry-After"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Body over the operation's limit */
            413: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Failure on the service side; nothing was modified */
            500: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description SERVICE_UNAVAILABLE; retry after `Retry-After` seconds */
            503: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "Retry-After": components["headers"]["Retry-After"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
}
