DROP INDEX `ledger_transactions_one_announcement`;--> statement-breakpoint
ALTER TABLE `ledger_transactions` ADD `announcement_generation` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
CREATE UNIQUE INDEX `ledger_transactions_one_announcement` ON `ledger_transactions` (`org_id`,`key_fingerprint`,`announcement_generation`) WHERE kind = 'key_announcement' AND state <> 'abandoned';--> statement-breakpoint
ALTER TABLE `organisations` ADD `domain` text;--> statement-breakpoint
ALTER TABLE `organisations` ADD `announcement_generation` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
CREATE TRIGGER `key_announcement_anchored` AFTER UPDATE OF `state` ON `ledger_transactions` WHEN NEW.`kind` = 'key_announcement' AND NEW.`state` = 'anchored' AND OLD.`state` <> 'anchored' BEGIN UPDATE `change_counter` SET `value` = `value` + 1 WHERE `id` = 1; END;