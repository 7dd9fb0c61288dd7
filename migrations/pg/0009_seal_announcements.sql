ALTER TABLE "ledger_transactions" ADD COLUMN "seal_fingerprint" "bytea";--> statement-breakpoint
UPDATE "ledger_transactions" SET "seal_fingerprint" = decode((SELECT "value" FROM "service_meta" WHERE "key" = 'seal_key_fingerprint'), 'hex') WHERE "kind" = 'key_announcement';
