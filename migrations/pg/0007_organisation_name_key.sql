ALTER TABLE "organisations" ADD COLUMN "name_key" text;--> statement-breakpoint
CREATE UNIQUE INDEX "organisations_name_key" ON "organisations" USING btree ("name_key");