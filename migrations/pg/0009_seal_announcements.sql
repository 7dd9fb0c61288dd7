ALTER TABLE "ledger_transactions" ADD COLUMN "seal_fingerprint" "bytea";--> statement-breakpoint
UPDATE "ledger_transactions" SET "seal_fingerprint" = (SELECT "fingerprint" FROM "signing_keys" WHERE "purpose" = 'service-seal') WHERE "kind" = 'key_announcement';
