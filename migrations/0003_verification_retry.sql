ALTER TABLE `verifications` ADD `retry_after_seconds` integer;--> statement-breakpoint
CREATE INDEX `verifications_scope_verdict` ON `verifications` (`org_id`,`environment`,`verdict`,`id`);