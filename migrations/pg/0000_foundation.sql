CREATE TABLE "api_keys" (
	"key_id" text PRIMARY KEY NOT NULL,
	"org_id" text NOT NULL,
	"environment" text NOT NULL,
	"scopes" text NOT NULL,
	"secret_digest" "bytea" NOT NULL,
	"created_at" bigint NOT NULL,
	"last_used_at" bigint,
	"revoked_at" bigint
);
--> statement-breakpoint
CREATE TABLE "app_challenges" (
	"challenge" text PRIMARY KEY NOT NULL,
	"purpose" text NOT NULL,
	"subject" text,
	"payload" text,
	"expires_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "app_sessions" (
	"token_digest" "bytea" PRIMARY KEY NOT NULL,
	"person_id" text NOT NULL,
	"created_at" bigint NOT NULL,
	"last_seen_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "audit_log" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"at" bigint NOT NULL,
	"actor" text NOT NULL,
	"action" text NOT NULL,
	"subject_type" text NOT NULL,
	"subject_id" text NOT NULL,
	"before" text,
	"after" text
);
--> statement-breakpoint
CREATE TABLE "change_counter" (
	"id" bigint PRIMARY KEY NOT NULL,
	"value" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "enrolments" (
	"token_digest" "bytea" PRIMARY KEY NOT NULL,
	"person_id" text NOT NULL,
	"expires_at" bigint NOT NULL,
	"used_at" bigint,
	"created_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "ledger_transactions" (
	"transaction_id" text PRIMARY KEY NOT NULL,
	"kind" text NOT NULL,
	"org_id" text NOT NULL,
	"record_id" text,
	"topic_id" text,
	"message" "bytea",
	"key_fingerprint" "bytea",
	"signed_bytes" "bytea",
	"valid_start_ms" bigint NOT NULL,
	"valid_seconds" bigint NOT NULL,
	"state" text NOT NULL,
	"sequence_number" bigint,
	"consensus_at" text,
	"running_hash" "bytea",
	"attempts" bigint DEFAULT 0 NOT NULL,
	"next_attempt_at" bigint NOT NULL,
	"last_error" text,
	"created_at" bigint NOT NULL,
	"updated_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "organisations" (
	"id" text PRIMARY KEY NOT NULL,
	"name" text NOT NULL,
	"api_access" boolean DEFAULT false NOT NULL,
	"addon" boolean DEFAULT false NOT NULL,
	"validated" boolean DEFAULT false NOT NULL,
	"suspended" boolean DEFAULT false NOT NULL,
	"created_at" bigint NOT NULL,
	"system_key_fingerprint" "bytea" NOT NULL,
	"topic_id" text
);
--> statement-breakpoint
CREATE TABLE "passkeys" (
	"credential_id" text PRIMARY KEY NOT NULL,
	"person_id" text NOT NULL,
	"public_key" "bytea" NOT NULL,
	"counter" bigint NOT NULL,
	"transports" text,
	"created_at" bigint NOT NULL,
	"last_used_at" bigint
);
--> statement-breakpoint
CREATE TABLE "persons" (
	"id" text PRIMARY KEY NOT NULL,
	"org_id" text NOT NULL,
	"name" text NOT NULL,
	"email" text NOT NULL,
	"identity_evidence" text NOT NULL,
	"suspended" boolean DEFAULT false NOT NULL,
	"key_fingerprint" "bytea",
	"created_at" bigint NOT NULL,
	"enrolled_at" bigint
);
--> statement-breakpoint
CREATE TABLE "records" (
	"id" text PRIMARY KEY NOT NULL,
	"org_id" text,
	"signer_type" text NOT NULL,
	"kind" text NOT NULL,
	"signer_hint" text,
	"doc_hash" text NOT NULL,
	"filename" text,
	"signed_at_ms" bigint NOT NULL,
	"signer_fingerprint" "bytea" NOT NULL,
	"signature" "bytea" NOT NULL,
	"seal_fingerprint" "bytea" NOT NULL,
	"seal_signature" "bytea" NOT NULL,
	"anchor_state" text NOT NULL,
	"topic_id" text NOT NULL,
	"transaction_id" text NOT NULL,
	"sequence_number" bigint,
	"consensus_at" text,
	"revoked_at" bigint,
	"revocation_reason" text,
	"revocation_transaction_id" text,
	"created_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "service_meta" (
	"key" text PRIMARY KEY NOT NULL,
	"value" text NOT NULL
);
--> statement-breakpoint
CREATE TABLE "signing_keys" (
	"fingerprint" "bytea" PRIMARY KEY NOT NULL,
	"algorithm" text NOT NULL,
	"public_key" "bytea" NOT NULL,
	"purpose" text NOT NULL,
	"sealed_seed" "bytea",
	"created_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "verifications" (
	"id" text PRIMARY KEY NOT NULL,
	"org_id" text NOT NULL,
	"environment" text NOT NULL,
	"key_id" text NOT NULL,
	"verdict" text NOT NULL,
	"doc_hash" text NOT NULL,
	"reference" text,
	"verified_at_ms" bigint NOT NULL,
	"retry_after_seconds" bigint
);
--> statement-breakpoint
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_org_id_organisations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organisations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "app_sessions" ADD CONSTRAINT "app_sessions_person_id_persons_id_fk" FOREIGN KEY ("person_id") REFERENCES "public"."persons"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "enrolments" ADD CONSTRAINT "enrolments_person_id_persons_id_fk" FOREIGN KEY ("person_id") REFERENCES "public"."persons"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "ledger_transactions" ADD CONSTRAINT "ledger_transactions_org_id_organisations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organisations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "passkeys" ADD CONSTRAINT "passkeys_person_id_persons_id_fk" FOREIGN KEY ("person_id") REFERENCES "public"."persons"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "persons" ADD CONSTRAINT "persons_org_id_organisations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organisations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "persons" ADD CONSTRAINT "persons_key_fingerprint_signing_keys_fingerprint_fk" FOREIGN KEY ("key_fingerprint") REFERENCES "public"."signing_keys"("fingerprint") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "records" ADD CONSTRAINT "records_org_id_organisations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organisations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "records" ADD CONSTRAINT "records_signer_fingerprint_signing_keys_fingerprint_fk" FOREIGN KEY ("signer_fingerprint") REFERENCES "public"."signing_keys"("fingerprint") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "records" ADD CONSTRAINT "records_seal_fingerprint_signing_keys_fingerprint_fk" FOREIGN KEY ("seal_fingerprint") REFERENCES "public"."signing_keys"("fingerprint") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "verifications" ADD CONSTRAINT "verifications_org_id_organisations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organisations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "api_keys_org" ON "api_keys" USING btree ("org_id");--> statement-breakpoint
CREATE INDEX "app_challenges_expiry" ON "app_challenges" USING btree ("expires_at");--> statement-breakpoint
CREATE INDEX "app_challenges_subject" ON "app_challenges" USING btree ("purpose","subject","expires_at");--> statement-breakpoint
CREATE INDEX "app_sessions_person" ON "app_sessions" USING btree ("person_id");--> statement-breakpoint
CREATE INDEX "app_sessions_last_seen" ON "app_sessions" USING btree ("last_seen_at");--> statement-breakpoint
CREATE INDEX "enrolments_person" ON "enrolments" USING btree ("person_id");--> statement-breakpoint
CREATE INDEX "ledger_transactions_work" ON "ledger_transactions" USING btree ("state","next_attempt_at");--> statement-breakpoint
CREATE INDEX "ledger_transactions_record" ON "ledger_transactions" USING btree ("record_id");--> statement-breakpoint
CREATE INDEX "ledger_transactions_valid_start" ON "ledger_transactions" USING btree ("valid_start_ms");--> statement-breakpoint
CREATE UNIQUE INDEX "ledger_transactions_one_topic" ON "ledger_transactions" USING btree ("org_id") WHERE kind = 'topic_create' AND state <> 'abandoned';--> statement-breakpoint
CREATE UNIQUE INDEX "ledger_transactions_one_announcement" ON "ledger_transactions" USING btree ("org_id","key_fingerprint") WHERE kind = 'key_announcement' AND state <> 'abandoned';--> statement-breakpoint
CREATE INDEX "passkeys_person" ON "passkeys" USING btree ("person_id");--> statement-breakpoint
CREATE INDEX "persons_org" ON "persons" USING btree ("org_id");--> statement-breakpoint
CREATE UNIQUE INDEX "persons_key_fingerprint" ON "persons" USING btree ("key_fingerprint") WHERE key_fingerprint IS NOT NULL;--> statement-breakpoint
CREATE INDEX "records_doc_hash" ON "records" USING btree ("doc_hash","id","org_id","signer_type","kind","signer_hint","signed_at_ms","signer_fingerprint","seal_fingerprint","anchor_state","topic_id","transaction_id","sequence_number","consensus_at","revoked_at","revocation_reason","created_at");--> statement-breakpoint
CREATE INDEX "records_anchor_state" ON "records" USING btree ("anchor_state");--> statement-breakpoint
CREATE UNIQUE INDEX "records_one_active" ON "records" USING btree ("org_id","doc_hash",(CASE WHEN signer_type = 'user' THEN signer_fingerprint ELSE ''::bytea END)) WHERE anchor_state <> 'abandoned' AND revoked_at IS NULL;--> statement-breakpoint
CREATE INDEX "records_person" ON "records" USING btree ("signer_fingerprint","id") WHERE signer_type = 'user';--> statement-breakpoint
CREATE INDEX "records_anchored_by_class" ON "records" USING btree ("doc_hash",(CASE WHEN revoked_at IS NOT NULL THEN 2 WHEN signer_type = 'user' THEN 0 ELSE 1 END),length(consensus_at),"consensus_at","id","anchor_state") WHERE anchor_state = 'anchored';--> statement-breakpoint
CREATE INDEX "verifications_scope" ON "verifications" USING btree ("org_id","environment","id","verdict","doc_hash","verified_at_ms","reference");--> statement-breakpoint
CREATE INDEX "verifications_scope_verdict" ON "verifications" USING btree ("org_id","environment","verdict","id");--> statement-breakpoint
CREATE INDEX "verifications_scope_hash" ON "verifications" USING btree ("org_id","environment","doc_hash","id");