-- Byte order for the text keys that order reads (decisions §12, docs/storage.md): a record's id and
-- consensus time, a log row's id. SQLite compares text by its bytes; a PostgreSQL database usually
-- has a linguistic default collation (en_US, ICU), in which "B" may sort before "a" and an index
-- cannot serve a `COLLATE "C"` order. The reads say `COLLATE "C"` so that both engines return the
-- same rows in the same order; with these columns in "C" the indexes over them serve those reads
-- (a large hash's class heads, a page of the log) instead of a scan and a sort.
--
-- The change counter's trigger names records.id among its columns, so it is dropped and made
-- again around the change. The indexes over the columns are rebuilt by the ALTERs.
DROP TRIGGER "records_checked_columns_changed" ON "records";
--> statement-breakpoint
ALTER TABLE "records" ALTER COLUMN "id" TYPE text COLLATE "C";
--> statement-breakpoint
ALTER TABLE "records" ALTER COLUMN "consensus_at" TYPE text COLLATE "C";
--> statement-breakpoint
ALTER TABLE "verifications" ALTER COLUMN "id" TYPE text COLLATE "C";
--> statement-breakpoint
CREATE TRIGGER "records_checked_columns_changed" AFTER UPDATE OF "id", "org_id", "signer_type", "doc_hash", "signed_at_ms", "signer_fingerprint", "signature", "seal_fingerprint", "seal_signature" ON "records" FOR EACH STATEMENT EXECUTE FUNCTION "raise_change_counter"();
