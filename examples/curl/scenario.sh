#!/usr/bin/env bash
# A document's life with docverify, in bash and curl: create a record of its hash, wait until it
# verifies as verified_org, find the verification in the log, save the receipt, revoke the
# record, and see it verify as revoked.
#
#   DOCVERIFY_URL=http://127.0.0.1:8080 DOCVERIFY_API_KEY=dv_live_... ./scenario.sh [FILE]
#
# The key needs records:write and records:revoke (`docverify sandbox` prints one). Without FILE
# a unique document is made up. Needs bash, curl and sha256sum; no jq: the few fields read are
# picked out of the JSON with sed. Exits 1 on any answer it does not expect.
set -euo pipefail

: "${DOCVERIFY_URL:?set DOCVERIFY_URL, e.g. http://127.0.0.1:8080}"
: "${DOCVERIFY_API_KEY:?set DOCVERIFY_API_KEY to a key with records:write and records:revoke}"
URL=${DOCVERIFY_URL%/}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

fail() { echo "error: $*" >&2; exit 1; }

# One string field of a flat JSON answer: field NAME FILE
field() { sed -n "s/.*\"$1\":\"\\([^\"]*\\)\".*/\\1/p" "$2" | head -n 1; }
# One integer field: number NAME FILE
number() { sed -n "s/.*\"$1\":\\([0-9][0-9]*\\).*/\\1/p" "$2" | head -n 1; }

# call METHOD PATH [JSON]: the answer's body in $WORK/body, headers in $WORK/headers, status in
# $STATUS. 429 and 503 are waited out as their Retry-After says (every operation is safe to repeat).
call() {
  local method=$1 path=$2 body=${3:-} attempt delay
  for attempt in 1 2 3 4 5 6 7 8; do
    local args=(-sS -X "$method" -o "$WORK/body" -D "$WORK/headers" -w '%{http_code}' -H "authorization: Bearer $DOCVERIFY_API_KEY")
    if [ -n "$body" ]; then args+=(-H 'content-type: application/json' --data-binary "$body"); fi
    STATUS=$(curl "${args[@]}" "$URL$path") || fail "$method $path: no answer from $URL"
    if [ "$STATUS" != 429 ] && [ "$STATUS" != 503 ]; then return 0; fi
    delay=$(retry_after 1)
    echo "  $method $path: $STATUS $(field code "$WORK/body"), retrying in ${delay} s"
    sleep "$delay"
  done
  fail "$method $path: still $STATUS after $attempt attempts"
}

# The last answer's Retry-After in seconds, or $1 when it has none.
retry_after() {
  local v
  v=$(tr -d '\r' < "$WORK/headers" | sed -n 's/^[Rr]etry-[Aa]fter: *\([0-9][0-9]*\)$/\1/p' | head -n 1)
  echo "${v:-$1}"
}

unexpected() { fail "$1: HTTP $STATUS $(field code "$WORK/body"): $(field message "$WORK/body")"; }

# The document: the file given, or a unique one made up.
if [ $# -ge 1 ]; then
  DOC=$1
  [ -f "$DOC" ] || fail "$DOC is not a file"
  NAME=$(basename "$DOC" | tr -cd "A-Za-z0-9._-" | cut -c 1-100)
else
  DOC=$WORK/document.txt
  echo "docverify example document $(date -u +%Y-%m-%dT%H:%M:%SZ) $RANDOM$RANDOM$RANDOM" > "$DOC"
  NAME=example.txt
fi
HASH="sha256:$(sha256sum "$DOC" | cut -d ' ' -f 1)"
echo "document: $HASH ($NAME)"

# 1. Create the record: 201 for a new one, 200 when the organisation already holds an active record of this hash.
call POST /v1/records "{\"originalDocHash\":\"$HASH\",\"filename\":\"$NAME\"}"
[ "$STATUS" = 201 ] || [ "$STATUS" = 200 ] || unexpected "create"
RECORD=$(field recordId "$WORK/body")
echo "create: $STATUS record $RECORD (anchorState $(field anchorState "$WORK/body"))"

# 2. Verify until verified_org: pending_anchor says when to ask again (retryAfterSeconds); a record
# not yet accepted by the ledger is not reported at all (no_record) for a moment.
DEADLINE=$((SECONDS + 180))
while :; do
  call POST /v1/verifications "{\"originalDocHash\":\"$HASH\",\"reference\":\"example scenario\"}"
  [ "$STATUS" = 200 ] || unexpected "verify"
  VERDICT=$(field verdict "$WORK/body")
  case $VERDICT in
    verified_org) break ;;
    pending_anchor | no_record) delay=$(number retryAfterSeconds "$WORK/body"); delay=${delay:-1} ;;
    *) fail "verify: verdict $VERDICT, expected verified_org" ;;
  esac
  [ "$SECONDS" -lt "$DEADLINE" ] || fail "verify: still $VERDICT after 180 s"
  echo "verify: $VERDICT, asking again in $delay s"
  sleep "$delay"
done
VERIFICATION=$(field verificationId "$WORK/body")
echo "verify: verified_org (verification $VERIFICATION)"

# 3. The verification log: the newest verifications of this hash, one page.
call GET "/v1/verifications?originalDocHash=${HASH/:/%3A}&limit=100"
[ "$STATUS" = 200 ] || unexpected "log"
grep -q "\"verificationId\":\"$VERIFICATION\"" "$WORK/body" || fail "log: verification $VERIFICATION is not on the first page"
echo "log: verification $VERIFICATION found on the first page"

# 4. The receipt, saved as served: it proves the record on the ledger without docverify.
RECEIPT=docverify-receipt-$RECORD.json
for attempt in 1 2 3 4 5; do
  call GET "/v1/records/$RECORD/receipt"
  [ "$STATUS" = 409 ] && [ "$(field code "$WORK/body")" = ANCHOR_NOT_FINAL ] || break
  sleep "$(retry_after 5)"
done
[ "$STATUS" = 200 ] || unexpected "receipt"
cp "$WORK/body" "$RECEIPT"
echo "receipt: saved $RECEIPT ($(wc -c < "$RECEIPT") bytes)"

# 5. Revoke it, once more after Retry-After if its anchor is not final yet.
call POST "/v1/records/$RECORD/revoke" '{"reason":"SUPERSEDED"}'
if [ "$STATUS" = 409 ] && [ "$(field code "$WORK/body")" = ANCHOR_NOT_FINAL ]; then
  delay=$(retry_after 5)
  echo "revoke: anchor not final, retrying in $delay s"
  sleep "$delay"
  call POST "/v1/records/$RECORD/revoke" '{"reason":"SUPERSEDED"}'
fi
[ "$STATUS" = 200 ] || unexpected "revoke"
echo "revoke: $STATUS (reason SUPERSEDED)"

# 6. Anyone verifying the document now learns it was revoked.
call POST /v1/verifications "{\"originalDocHash\":\"$HASH\"}"
[ "$STATUS" = 200 ] || unexpected "verify"
VERDICT=$(field verdict "$WORK/body")
[ "$VERDICT" = revoked ] || fail "verify: verdict $VERDICT, expected revoked"
echo "verify: revoked"
echo "done: record $RECORD created, verified, logged, receipted and revoked"
