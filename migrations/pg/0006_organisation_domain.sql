DROP INDEX "ledger_transactions_one_announcement";--> statement-breakpoint
ALTER TABLE "ledger_transactions" ADD COLUMN "announcement_generation" bigint DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "organisations" ADD COLUMN "domain" text;--> statement-breakpoint
ALTER TABLE "organisations" ADD COLUMN "announcement_generation" bigint DEFAULT 0 NOT NULL;--> statement-breakpoint
CREATE UNIQUE INDEX "ledger_transactions_one_announcement" ON "ledger_transactions" USING btree ("org_id","key_fingerprint","announcement_generation") WHERE kind = 'key_announcement' AND state <> 'abandoned';--> statement-breakpoint
-- A key announcement reaching consensus raises the change counter (as SQLite's migration 0011):
-- a kept receipt carries its key's latest anchored announcement, which may now be this one.
CREATE TRIGGER "key_announcement_anchored" AFTER UPDATE OF "state" ON "ledger_transactions" FOR EACH ROW WHEN (NEW."kind" = 'key_announcement' AND NEW."state" = 'anchored' AND OLD."state" <> 'anchored') EXECUTE FUNCTION "raise_change_counter"();