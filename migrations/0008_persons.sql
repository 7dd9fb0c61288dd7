CREATE TABLE `enrolments` (
	`token_digest` blob PRIMARY KEY NOT NULL,
	`person_id` text NOT NULL,
	`expires_at` integer NOT NULL,
	`used_at` integer,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`person_id`) REFERENCES `persons`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `enrolments_person` ON `enrolments` (`person_id`);--> statement-breakpoint
CREATE TABLE `persons` (
	`id` text PRIMARY KEY NOT NULL,
	`org_id` text NOT NULL,
	`name` text NOT NULL,
	`email` text NOT NULL,
	`identity_evidence` text NOT NULL,
	`suspended` integer DEFAULT false NOT NULL,
	`key_fingerprint` blob,
	`created_at` integer NOT NULL,
	`enrolled_at` integer,
	FOREIGN KEY (`org_id`) REFERENCES `organisations`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`key_fingerprint`) REFERENCES `signing_keys`(`fingerprint`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `persons_org` ON `persons` (`org_id`);--> statement-breakpoint
CREATE UNIQUE INDEX `persons_key_fingerprint` ON `persons` (`key_fingerprint`) WHERE key_fingerprint IS NOT NULL;