ALTER TABLE `ledger_transactions` ADD `seal_fingerprint` blob;--> statement-breakpoint
UPDATE `ledger_transactions` SET `seal_fingerprint` = unhex((SELECT `value` FROM `service_meta` WHERE `key` = 'seal_key_fingerprint')) WHERE `kind` = 'key_announcement';
