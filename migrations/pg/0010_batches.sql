DROP INDEX "ledger_transactions_work";--> statement-breakpoint
ALTER TABLE "ledger_transactions" ADD COLUMN "batch_leaf" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "ledger_transactions" ADD COLUMN "batch_transaction_id" text;--> statement-breakpoint
ALTER TABLE "ledger_transactions" ADD COLUMN "leaf_index" integer;--> statement-breakpoint
ALTER TABLE "ledger_transactions" ADD COLUMN "inclusion_path" "bytea";--> statement-breakpoint
ALTER TABLE "ledger_transactions" ADD COLUMN "batch_sequence" integer;--> statement-breakpoint
ALTER TABLE "ledger_transactions" ADD COLUMN "batch_size" integer;--> statement-breakpoint
CREATE INDEX "ledger_transactions_open" ON "ledger_transactions" USING btree ("org_id","key_fingerprint","seal_fingerprint") WHERE state = 'open';--> statement-breakpoint
CREATE INDEX "ledger_transactions_leaves" ON "ledger_transactions" USING btree ("batch_transaction_id","record_id") WHERE batch_transaction_id IS NOT NULL;--> statement-breakpoint
CREATE UNIQUE INDEX "ledger_transactions_one_batch" ON "ledger_transactions" USING btree ("org_id","batch_sequence") WHERE kind = 'batch_message';--> statement-breakpoint
CREATE INDEX "ledger_transactions_work" ON "ledger_transactions" USING btree ("state","next_attempt_at") WHERE batch_leaf = 0;