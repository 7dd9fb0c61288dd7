DROP INDEX `records_one_active`;--> statement-breakpoint
CREATE UNIQUE INDEX `records_one_active` ON `records` (`org_id`,`doc_hash`) WHERE anchor_state <> 'abandoned' AND revoked_at IS NULL;--> statement-breakpoint
ALTER TABLE `verifications` ADD `retry_after_seconds` integer;--> statement-breakpoint
CREATE INDEX `verifications_scope_verdict` ON `verifications` (`org_id`,`environment`,`verdict`,`id`);