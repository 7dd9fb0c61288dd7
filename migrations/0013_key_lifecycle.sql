ALTER TABLE `api_keys` ADD `expires_at` integer;--> statement-breakpoint
ALTER TABLE `signing_keys` ADD `replaces` blob;--> statement-breakpoint
ALTER TABLE `signing_keys` ADD `retired_at` integer;--> statement-breakpoint
ALTER TABLE `signing_keys` ADD `compromised_since` integer;--> statement-breakpoint
ALTER TABLE `signing_keys` ADD `compromised_at` integer;--> statement-breakpoint
CREATE UNIQUE INDEX `ledger_transactions_one_compromise` ON `ledger_transactions` (`key_fingerprint`) WHERE kind = 'key_compromise' AND state <> 'abandoned';--> statement-breakpoint
DROP TRIGGER `api_keys_credential_changed`;--> statement-breakpoint
CREATE TRIGGER `api_keys_credential_changed` AFTER UPDATE OF `key_id`, `org_id`, `environment`, `scopes`, `secret_digest`, `revoked_at`, `expires_at` ON `api_keys` BEGIN UPDATE `change_counter` SET `value` = `value` + 1 WHERE `id` = 1; END;