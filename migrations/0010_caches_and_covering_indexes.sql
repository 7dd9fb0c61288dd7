CREATE TABLE `change_counter` (
	`id` integer PRIMARY KEY NOT NULL,
	`value` integer NOT NULL
);
--> statement-breakpoint
DROP INDEX `records_doc_hash`;--> statement-breakpoint
CREATE INDEX `records_doc_hash` ON `records` (`doc_hash`,`id`,`org_id`,`signer_type`,`kind`,`signer_hint`,`signed_at_ms`,`signer_fingerprint`,`seal_fingerprint`,`anchor_state`,`topic_id`,`transaction_id`,`sequence_number`,`consensus_at`,`revoked_at`,`revocation_reason`,`created_at`);--> statement-breakpoint
DROP INDEX `verifications_scope`;--> statement-breakpoint
CREATE INDEX `verifications_scope` ON `verifications` (`org_id`,`environment`,`id`,`verdict`,`doc_hash`,`verified_at_ms`,`reference`);--> statement-breakpoint
INSERT INTO `change_counter` (`id`, `value`) VALUES (1, 0);--> statement-breakpoint
CREATE TRIGGER `records_checked_columns_changed` AFTER UPDATE OF `id`, `org_id`, `signer_type`, `doc_hash`, `signed_at_ms`, `signer_fingerprint`, `signature`, `seal_fingerprint`, `seal_signature` ON `records` BEGIN UPDATE `change_counter` SET `value` = `value` + 1 WHERE `id` = 1; END;--> statement-breakpoint
CREATE TRIGGER `records_deleted` AFTER DELETE ON `records` BEGIN UPDATE `change_counter` SET `value` = `value` + 1 WHERE `id` = 1; END;--> statement-breakpoint
CREATE TRIGGER `signing_keys_changed` AFTER UPDATE ON `signing_keys` BEGIN UPDATE `change_counter` SET `value` = `value` + 1 WHERE `id` = 1; END;--> statement-breakpoint
CREATE TRIGGER `signing_keys_deleted` AFTER DELETE ON `signing_keys` BEGIN UPDATE `change_counter` SET `value` = `value` + 1 WHERE `id` = 1; END;--> statement-breakpoint
CREATE TRIGGER `organisations_changed` AFTER UPDATE ON `organisations` BEGIN UPDATE `change_counter` SET `value` = `value` + 1 WHERE `id` = 1; END;--> statement-breakpoint
CREATE TRIGGER `organisations_deleted` AFTER DELETE ON `organisations` BEGIN UPDATE `change_counter` SET `value` = `value` + 1 WHERE `id` = 1; END;--> statement-breakpoint
CREATE TRIGGER `api_keys_credential_changed` AFTER UPDATE OF `key_id`, `org_id`, `environment`, `scopes`, `secret_digest`, `revoked_at` ON `api_keys` BEGIN UPDATE `change_counter` SET `value` = `value` + 1 WHERE `id` = 1; END;--> statement-breakpoint
CREATE TRIGGER `api_keys_deleted` AFTER DELETE ON `api_keys` BEGIN UPDATE `change_counter` SET `value` = `value` + 1 WHERE `id` = 1; END;--> statement-breakpoint
CREATE TRIGGER `persons_standing_changed` AFTER UPDATE OF `id`, `org_id`, `name`, `suspended`, `key_fingerprint` ON `persons` BEGIN UPDATE `change_counter` SET `value` = `value` + 1 WHERE `id` = 1; END;--> statement-breakpoint
CREATE TRIGGER `persons_deleted` AFTER DELETE ON `persons` BEGIN UPDATE `change_counter` SET `value` = `value` + 1 WHERE `id` = 1; END;
