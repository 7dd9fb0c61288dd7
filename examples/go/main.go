// A document's life with docverify, in Go with the standard library only: create a record of
// the document's hash, wait until it verifies as verified_org, find the verification in the
// log, save the receipt, revoke the record, and see it verify as revoked.
//
//	DOCVERIFY_URL=http://127.0.0.1:8080 DOCVERIFY_API_KEY=dv_live_... go run . [FILE]
//
// Go 1.19 or later. The key needs records:write and records:revoke (`docverify sandbox` prints
// one). Without FILE a unique document is made up. Exits 1 on any answer it does not expect.
package main

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// answer is one HTTP answer: its status, headers, exact body, and the body parsed when it is JSON.
type answer struct {
	status  int
	headers http.Header
	body    []byte
	json    map[string]interface{}
}

// retryAfter is Retry-After in seconds, or fallback when the answer has none.
func (a answer) retryAfter(fallback int) int {
	if v, err := strconv.Atoi(a.headers.Get("Retry-After")); err == nil && v >= 0 {
		return v
	}
	return fallback
}

func (a answer) code() string {
	if e, ok := a.json["error"].(map[string]interface{}); ok {
		if c, ok := e["code"].(string); ok {
			return c
		}
	}
	return ""
}

func (a answer) describe() string {
	message := string(a.body)
	if len(message) > 200 {
		message = message[:200]
	}
	if e, ok := a.json["error"].(map[string]interface{}); ok {
		if m, ok := e["message"].(string); ok {
			message = m
		}
	}
	return fmt.Sprintf("HTTP %d %s: %s", a.status, a.code(), message)
}

func (a answer) str(name string) string {
	s, _ := a.json[name].(string)
	return s
}

var (
	base   = strings.TrimRight(os.Getenv("DOCVERIFY_URL"), "/")
	key    = os.Getenv("DOCVERIFY_API_KEY")
	client = &http.Client{Timeout: 30 * time.Second}
)

func fail(format string, args ...interface{}) {
	fmt.Fprintf(os.Stderr, "error: "+format+"\n", args...)
	os.Exit(1)
}

func sleep(seconds int) { time.Sleep(time.Duration(seconds) * time.Second) }

// call sends one request; 429 and 503 are waited out as their Retry-After says (every operation
// is safe to repeat).
func call(method, path string, body interface{}) answer {
	for attempt := 1; ; attempt++ {
		var reader io.Reader
		if body != nil {
			encoded, err := json.Marshal(body)
			if err != nil {
				fail("%s %s: %v", method, path, err)
			}
			reader = bytes.NewReader(encoded)
		}
		req, err := http.NewRequest(method, base+path, reader)
		if err != nil {
			fail("%s %s: %v", method, path, err)
		}
		req.Header.Set("Authorization", "Bearer "+key)
		if body != nil {
			req.Header.Set("Content-Type", "application/json")
		}
		res, err := client.Do(req)
		if err != nil {
			fail("%s %s: no answer from %s (%v)", method, path, base, err)
		}
		raw, err := io.ReadAll(res.Body)
		res.Body.Close()
		if err != nil {
			fail("%s %s: %v", method, path, err)
		}
		a := answer{status: res.StatusCode, headers: res.Header, body: raw}
		_ = json.Unmarshal(raw, &a.json)
		if (a.status != 429 && a.status != 503) || attempt == 8 {
			return a
		}
		wait := a.retryAfter(1)
		fmt.Printf("  %s %s: %s; retrying in %d s\n", method, path, a.describe(), wait)
		sleep(wait)
	}
}

func main() {
	if base == "" {
		fail("set DOCVERIFY_URL, e.g. http://127.0.0.1:8080")
	}
	if key == "" {
		fail("set DOCVERIFY_API_KEY to a key with records:write and records:revoke")
	}

	// The document: the file given, or a unique one made up.
	var document []byte
	name := "example.txt"
	if len(os.Args) > 1 {
		var err error
		if document, err = os.ReadFile(os.Args[1]); err != nil {
			fail("%v", err)
		}
		name = filepath.Base(os.Args[1])
	} else {
		nonce := make([]byte, 16)
		if _, err := rand.Read(nonce); err != nil {
			fail("%v", err)
		}
		document = []byte(fmt.Sprintf("docverify example document %s %x\n", time.Now().UTC().Format(time.RFC3339Nano), nonce))
	}
	sum := sha256.Sum256(document)
	hash := "sha256:" + hex.EncodeToString(sum[:])
	fmt.Printf("document: %s (%s)\n", hash, name)

	// 1. Create the record: 201 for a new one, 200 when the organisation already holds an active record of this hash.
	created := call("POST", "/v1/records", map[string]string{"originalDocHash": hash, "filename": name})
	if created.status != 201 && created.status != 200 {
		fail("create: %s", created.describe())
	}
	recordID := created.str("recordId")
	fmt.Printf("create: %d record %s (anchorState %s)\n", created.status, recordID, created.str("anchorState"))

	// 2. Verify until verified_org: pending_anchor says when to ask again (retryAfterSeconds); a
	// record not yet accepted by the ledger is not reported at all (no_record) for a moment.
	deadline := time.Now().Add(180 * time.Second)
	var verification answer
	for {
		verification = call("POST", "/v1/verifications", map[string]string{"originalDocHash": hash, "reference": "example scenario"})
		if verification.status != 200 {
			fail("verify: %s", verification.describe())
		}
		verdict := verification.str("verdict")
		if verdict == "verified_org" {
			break
		}
		if verdict != "pending_anchor" && verdict != "no_record" {
			fail("verify: verdict %s, expected verified_org", verdict)
		}
		if time.Now().After(deadline) {
			fail("verify: still %s after 180 s", verdict)
		}
		wait := 1
		if s, ok := verification.json["retryAfterSeconds"].(float64); ok {
			wait = int(s)
		}
		fmt.Printf("verify: %s, asking again in %d s\n", verdict, wait)
		sleep(wait)
	}
	verificationID := verification.str("verificationId")
	fmt.Printf("verify: verified_org (verification %s)\n", verificationID)

	// 3. The verification log: the newest verifications of this hash, one page.
	query := url.Values{"originalDocHash": {hash}, "limit": {"100"}}
	log := call("GET", "/v1/verifications?"+query.Encode(), nil)
	if log.status != 200 {
		fail("log: %s", log.describe())
	}
	found := false
	if page, ok := log.json["data"].([]interface{}); ok {
		for _, entry := range page {
			if v, ok := entry.(map[string]interface{}); ok && v["verificationId"] == verificationID {
				found = true
			}
		}
	}
	if !found {
		fail("log: verification %s is not on the first page", verificationID)
	}
	fmt.Printf("log: verification %s found on the first page\n", verificationID)

	// 4. The receipt, saved as served: it proves the record on the ledger without docverify.
	receipt := call("GET", "/v1/records/"+recordID+"/receipt", nil)
	for i := 0; i < 5 && receipt.status == 409 && receipt.code() == "ANCHOR_NOT_FINAL"; i++ {
		sleep(receipt.retryAfter(5))
		receipt = call("GET", "/v1/records/"+recordID+"/receipt", nil)
	}
	if receipt.status != 200 {
		fail("receipt: %s", receipt.describe())
	}
	saved := "docverify-receipt-" + recordID + ".json"
	if err := os.WriteFile(saved, receipt.body, 0o644); err != nil {
		fail("receipt: %v", err)
	}
	fmt.Printf("receipt: saved %s (%d bytes)\n", saved, len(receipt.body))

	// 5. Revoke it, once more after Retry-After if its anchor is not final yet.
	reason := map[string]string{"reason": "SUPERSEDED"}
	revoked := call("POST", "/v1/records/"+recordID+"/revoke", reason)
	if revoked.status == 409 && revoked.code() == "ANCHOR_NOT_FINAL" {
		wait := revoked.retryAfter(5)
		fmt.Printf("revoke: anchor not final, retrying in %d s\n", wait)
		sleep(wait)
		revoked = call("POST", "/v1/records/"+recordID+"/revoke", reason)
	}
	if revoked.status != 200 {
		fail("revoke: %s", revoked.describe())
	}
	fmt.Printf("revoke: %d (reason SUPERSEDED)\n", revoked.status)

	// 6. Anyone verifying the document now learns it was revoked.
	last := call("POST", "/v1/verifications", map[string]string{"originalDocHash": hash})
	if last.status != 200 {
		fail("verify: %s", last.describe())
	}
	if v := last.str("verdict"); v != "revoked" {
		fail("verify: verdict %s, expected revoked", v)
	}
	fmt.Println("verify: revoked")
	fmt.Printf("done: record %s created, verified, logged, receipted and revoked\n", recordID)
}
