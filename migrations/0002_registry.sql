CREATE TABLE `signing_keys` (
	`fingerprint` blob PRIMARY KEY NOT NULL,
	`algorithm` text NOT NULL,
	`public_key` blob NOT NULL,
	`purpose` text NOT NULL,
	`sealed_seed` blob,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
-- Organisation system keys move from their organisation row into the key registry.
INSERT INTO `signing_keys`("fingerprint", "algorithm", "public_key", "purpose", "sealed_seed", "created_at") SELECT "system_key_fingerprint", "system_key_algorithm", "system_public_key", 'org:' || "id", "system_key_sealed", "created_at" FROM `organisations`;
--> statement-breakpoint
CREATE TABLE `ledger_transactions` (
	`transaction_id` text PRIMARY KEY NOT NULL,
	`kind` text NOT NULL,
	`org_id` text NOT NULL,
	`record_id` text,
	`topic_id` text,
	`message` blob,
	`signed_bytes` blob,
	`valid_start_ms` integer NOT NULL,
	`valid_seconds` integer NOT NULL,
	`state` text NOT NULL,
	`sequence_number` integer,
	`consensus_at` text,
	`running_hash` blob,
	`attempts` integer DEFAULT 0 NOT NULL,
	`next_attempt_at` integer NOT NULL,
	`last_error` text,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`org_id`) REFERENCES `organisations`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `ledger_transactions_work` ON `ledger_transactions` (`state`,`next_attempt_at`);--> statement-breakpoint
CREATE INDEX `ledger_transactions_record` ON `ledger_transactions` (`record_id`);--> statement-breakpoint
CREATE UNIQUE INDEX `ledger_transactions_one_topic` ON `ledger_transactions` (`org_id`) WHERE kind = 'topic_create' AND state <> 'abandoned';--> statement-breakpoint
CREATE TABLE `records` (
	`id` text PRIMARY KEY NOT NULL,
	`org_id` text,
	`signer_type` text NOT NULL,
	`kind` text NOT NULL,
	`signer_hint` text,
	`doc_hash` text NOT NULL,
	`filename` text,
	`signed_at_ms` integer NOT NULL,
	`signer_fingerprint` blob NOT NULL,
	`signature` blob NOT NULL,
	`seal_fingerprint` blob NOT NULL,
	`seal_signature` blob NOT NULL,
	`anchor_state` text NOT NULL,
	`topic_id` text NOT NULL,
	`transaction_id` text NOT NULL,
	`sequence_number` integer,
	`consensus_at` text,
	`revoked_at` integer,
	`revocation_reason` text,
	`revocation_transaction_id` text,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`org_id`) REFERENCES `organisations`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`signer_fingerprint`) REFERENCES `signing_keys`(`fingerprint`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`seal_fingerprint`) REFERENCES `signing_keys`(`fingerprint`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `records_doc_hash` ON `records` (`doc_hash`);--> statement-breakpoint
CREATE UNIQUE INDEX `records_one_active` ON `records` (`org_id`,`doc_hash`) WHERE anchor_state <> 'abandoned';--> statement-breakpoint
CREATE TABLE `verifications` (
	`id` text PRIMARY KEY NOT NULL,
	`org_id` text NOT NULL,
	`environment` text NOT NULL,
	`key_id` text NOT NULL,
	`verdict` text NOT NULL,
	`doc_hash` text NOT NULL,
	`reference` text,
	`verified_at_ms` integer NOT NULL,
	FOREIGN KEY (`org_id`) REFERENCES `organisations`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `verifications_scope` ON `verifications` (`org_id`,`environment`,`id`);--> statement-breakpoint
CREATE INDEX `verifications_scope_hash` ON `verifications` (`org_id`,`environment`,`doc_hash`,`id`);--> statement-breakpoint
ALTER TABLE `organisations` DROP COLUMN `system_key_algorithm`;--> statement-breakpoint
ALTER TABLE `organisations` DROP COLUMN `system_public_key`;--> statement-breakpoint
ALTER TABLE `organisations` DROP COLUMN `system_key_sealed`;