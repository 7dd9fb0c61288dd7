CREATE TABLE `app_challenges` (
	`challenge` text PRIMARY KEY NOT NULL,
	`purpose` text NOT NULL,
	`subject` text,
	`payload` text,
	`expires_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `app_challenges_expiry` ON `app_challenges` (`expires_at`);--> statement-breakpoint
CREATE INDEX `app_challenges_subject` ON `app_challenges` (`purpose`,`subject`,`expires_at`);--> statement-breakpoint
CREATE TABLE `app_sessions` (
	`token_digest` blob PRIMARY KEY NOT NULL,
	`person_id` text NOT NULL,
	`created_at` integer NOT NULL,
	`last_seen_at` integer NOT NULL,
	FOREIGN KEY (`person_id`) REFERENCES `persons`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `app_sessions_person` ON `app_sessions` (`person_id`);--> statement-breakpoint
CREATE INDEX `app_sessions_last_seen` ON `app_sessions` (`last_seen_at`);--> statement-breakpoint
CREATE TABLE `passkeys` (
	`credential_id` text PRIMARY KEY NOT NULL,
	`person_id` text NOT NULL,
	`public_key` blob NOT NULL,
	`counter` integer NOT NULL,
	`transports` text,
	`created_at` integer NOT NULL,
	`last_used_at` integer,
	FOREIGN KEY (`person_id`) REFERENCES `persons`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `passkeys_person` ON `passkeys` (`person_id`);--> statement-breakpoint
DROP INDEX `records_one_active`;--> statement-breakpoint
CREATE INDEX `records_person` ON `records` (`signer_fingerprint`,`id`) WHERE signer_type = 'user';--> statement-breakpoint
CREATE UNIQUE INDEX `records_one_active` ON `records` (`org_id`,`doc_hash`,(CASE WHEN signer_type = 'user' THEN signer_fingerprint ELSE x'' END)) WHERE anchor_state <> 'abandoned' AND revoked_at IS NULL;