ALTER TABLE `ledger_transactions` ADD `seal_fingerprint` blob;--> statement-breakpoint
UPDATE `ledger_transactions` SET `seal_fingerprint` = (SELECT `fingerprint` FROM `signing_keys` WHERE `purpose` = 'service-seal') WHERE `kind` = 'key_announcement';
