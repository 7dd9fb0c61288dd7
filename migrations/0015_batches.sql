DROP INDEX `ledger_transactions_work`;--> statement-breakpoint
ALTER TABLE `ledger_transactions` ADD `batch_leaf` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `ledger_transactions` ADD `batch_transaction_id` text;--> statement-breakpoint
ALTER TABLE `ledger_transactions` ADD `leaf_index` integer;--> statement-breakpoint
ALTER TABLE `ledger_transactions` ADD `inclusion_path` blob;--> statement-breakpoint
ALTER TABLE `ledger_transactions` ADD `batch_sequence` integer;--> statement-breakpoint
ALTER TABLE `ledger_transactions` ADD `batch_size` integer;--> statement-breakpoint
CREATE INDEX `ledger_transactions_open` ON `ledger_transactions` (`org_id`,`key_fingerprint`,`seal_fingerprint`) WHERE state = 'open';--> statement-breakpoint
CREATE INDEX `ledger_transactions_leaves` ON `ledger_transactions` (`batch_transaction_id`,`record_id`) WHERE batch_transaction_id IS NOT NULL;--> statement-breakpoint
CREATE UNIQUE INDEX `ledger_transactions_one_batch` ON `ledger_transactions` (`org_id`,`batch_sequence`) WHERE kind = 'batch_message';--> statement-breakpoint
CREATE INDEX `ledger_transactions_work` ON `ledger_transactions` (`state`,`next_attempt_at`) WHERE batch_leaf = 0;