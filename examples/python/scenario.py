#!/usr/bin/env python3
"""A document's life with docverify, in Python with the standard library only.

Create a record of the document's hash, wait until it verifies as verified_org, find the
verification in the log, save the receipt, revoke the record, and see it verify as revoked.

    DOCVERIFY_URL=http://127.0.0.1:8080 DOCVERIFY_API_KEY=dv_live_... python3 scenario.py [FILE]

Python 3.8 or later. The key needs records:write and records:revoke (`docverify sandbox` prints
one). Without FILE a unique document is made up. Exits 1 on any answer it does not expect.
"""
import datetime
import hashlib
import json
import os
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid


class Unexpected(Exception):
    pass


class Answer:
    def __init__(self, status, headers, body):
        self.status = status
        self.headers = headers
        self.body = body
        try:
            self.json = json.loads(body)
        except ValueError:
            self.json = {}
        if not isinstance(self.json, dict):
            self.json = {}

    def retry_after(self, fallback):
        """Retry-After in seconds, or `fallback` when the answer has none."""
        value = self.headers.get("Retry-After", "")
        return int(value) if value.isdigit() else fallback

    def code(self):
        return (self.json.get("error") or {}).get("code", "")

    def describe(self):
        error = self.json.get("error") or {}
        return "HTTP %d %s: %s" % (self.status, error.get("code", ""), error.get("message", self.body[:200].decode("utf-8", "replace")))


BASE = os.environ.get("DOCVERIFY_URL", "").rstrip("/")
KEY = os.environ.get("DOCVERIFY_API_KEY", "")


def call(method, path, body=None):
    """One request; 429 and 503 are waited out as their Retry-After says (every operation is safe to repeat)."""
    for attempt in range(1, 9):
        headers = {"Authorization": "Bearer " + KEY}
        data = None
        if body is not None:
            headers["Content-Type"] = "application/json"
            data = json.dumps(body).encode("utf-8")
        request = urllib.request.Request(BASE + path, data=data, headers=headers, method=method)
        try:
            with urllib.request.urlopen(request, timeout=30) as res:
                answer = Answer(res.status, res.headers, res.read())
        except urllib.error.HTTPError as e:
            answer = Answer(e.code, e.headers, e.read())
        except (urllib.error.URLError, OSError) as e:
            raise Unexpected("%s %s: no answer from %s (%s)" % (method, path, BASE, e))
        if answer.status not in (429, 503) or attempt == 8:
            return answer
        wait = answer.retry_after(1)
        print("  %s %s: %s; retrying in %d s" % (method, path, answer.describe(), wait), flush=True)
        time.sleep(wait)


def main():
    if BASE == "":
        raise Unexpected("set DOCVERIFY_URL, e.g. http://127.0.0.1:8080")
    if KEY == "":
        raise Unexpected("set DOCVERIFY_API_KEY to a key with records:write and records:revoke")

    # The document: the file given, or a unique one made up.
    if len(sys.argv) > 1:
        with open(sys.argv[1], "rb") as f:
            document = f.read()
        name = os.path.basename(sys.argv[1])
    else:
        now = datetime.datetime.now(datetime.timezone.utc).isoformat()
        document = ("docverify example document %s %s\n" % (now, uuid.uuid4())).encode("utf-8")
        name = "example.txt"
    digest = "sha256:" + hashlib.sha256(document).hexdigest()
    print("document: %s (%s)" % (digest, name), flush=True)

    # 1. Create the record: 201 for a new one, 200 when the organisation already holds an active record of this hash.
    created = call("POST", "/v1/records", {"originalDocHash": digest, "filename": name})
    if created.status not in (200, 201):
        raise Unexpected("create: " + created.describe())
    record_id = created.json["recordId"]
    print("create: %d record %s (anchorState %s)" % (created.status, record_id, created.json.get("anchorState")), flush=True)

    # 2. Verify until verified_org: pending_anchor says when to ask again (retryAfterSeconds); a
    # record not yet accepted by the ledger is not reported at all (no_record) for a moment.
    deadline = time.monotonic() + 180
    while True:
        verification = call("POST", "/v1/verifications", {"originalDocHash": digest, "reference": "example scenario"})
        if verification.status != 200:
            raise Unexpected("verify: " + verification.describe())
        verdict = verification.json.get("verdict")
        if verdict == "verified_org":
            break
        if verdict not in ("pending_anchor", "no_record"):
            raise Unexpected("verify: verdict %s, expected verified_org" % verdict)
        if time.monotonic() > deadline:
            raise Unexpected("verify: still %s after 180 s" % verdict)
        wait = verification.json.get("retryAfterSeconds", 1)
        print("verify: %s, asking again in %d s" % (verdict, wait), flush=True)
        time.sleep(wait)
    verification_id = verification.json["verificationId"]
    print("verify: verified_org (verification %s)" % verification_id, flush=True)

    # 3. The verification log: the newest verifications of this hash, one page.
    log = call("GET", "/v1/verifications?" + urllib.parse.urlencode({"originalDocHash": digest, "limit": 100}))
    if log.status != 200:
        raise Unexpected("log: " + log.describe())
    if not any(v.get("verificationId") == verification_id for v in log.json.get("data", [])):
        raise Unexpected("log: verification %s is not on the first page" % verification_id)
    print("log: verification %s found on the first page" % verification_id, flush=True)

    # 4. The receipt, saved as served: it proves the record on the ledger without docverify.
    receipt = call("GET", "/v1/records/%s/receipt" % record_id)
    for _ in range(5):
        if receipt.status != 409 or receipt.code() != "ANCHOR_NOT_FINAL":
            break
        time.sleep(receipt.retry_after(5))
        receipt = call("GET", "/v1/records/%s/receipt" % record_id)
    if receipt.status != 200:
        raise Unexpected("receipt: " + receipt.describe())
    saved = "docverify-receipt-%s.json" % record_id
    with open(saved, "wb") as f:
        f.write(receipt.body)
    print("receipt: saved %s (%d bytes)" % (saved, len(receipt.body)), flush=True)

    # 5. Revoke it, once more after Retry-After if its anchor is not final yet.
    revoked = call("POST", "/v1/records/%s/revoke" % record_id, {"reason": "SUPERSEDED"})
    if revoked.status == 409 and revoked.code() == "ANCHOR_NOT_FINAL":
        wait = revoked.retry_after(5)
        print("revoke: anchor not final, retrying in %d s" % wait, flush=True)
        time.sleep(wait)
        revoked = call("POST", "/v1/records/%s/revoke" % record_id, {"reason": "SUPERSEDED"})
    if revoked.status != 200:
        raise Unexpected("revoke: " + revoked.describe())
    print("revoke: %d (reason SUPERSEDED)" % revoked.status, flush=True)

    # 6. Anyone verifying the document now learns it was revoked.
    last = call("POST", "/v1/verifications", {"originalDocHash": digest})
    if last.status != 200:
        raise Unexpected("verify: " + last.describe())
    if last.json.get("verdict") != "revoked":
        raise Unexpected("verify: verdict %s, expected revoked" % last.json.get("verdict"))
    print("verify: revoked")
    print("done: record %s created, verified, logged, receipted and revoked" % record_id)


if __name__ == "__main__":
    try:
        main()
    except (Unexpected, OSError, KeyError) as e:
        print("error: %s" % e, file=sys.stderr)
        sys.exit(1)
