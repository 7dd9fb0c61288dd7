ALTER TABLE `organisations` ADD `name_key` text;--> statement-breakpoint
CREATE UNIQUE INDEX `organisations_name_key` ON `organisations` (`name_key`);