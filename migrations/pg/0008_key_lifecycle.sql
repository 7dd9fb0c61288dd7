ALTER TABLE "api_keys" ADD COLUMN "expires_at" bigint;--> statement-breakpoint
ALTER TABLE "signing_keys" ADD COLUMN "replaces" "bytea";--> statement-breakpoint
ALTER TABLE "signing_keys" ADD COLUMN "retired_at" bigint;--> statement-breakpoint
ALTER TABLE "signing_keys" ADD COLUMN "compromised_since" bigint;--> statement-breakpoint
ALTER TABLE "signing_keys" ADD COLUMN "compromised_at" bigint;--> statement-breakpoint
CREATE UNIQUE INDEX "ledger_transactions_one_compromise" ON "ledger_transactions" USING btree ("key_fingerprint") WHERE kind = 'key_compromise' AND state <> 'abandoned';--> statement-breakpoint
DROP TRIGGER "api_keys_credential_changed" ON "api_keys";--> statement-breakpoint
CREATE TRIGGER "api_keys_credential_changed" AFTER UPDATE OF "key_id", "org_id", "environment", "scopes", "secret_digest", "revoked_at", "expires_at" ON "api_keys" FOR EACH STATEMENT EXECUTE FUNCTION "raise_change_counter"();