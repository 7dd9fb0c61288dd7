-- What drizzle's schema cannot express, as in the SQLite migrations 0001 and 0010.
-- The audit log is append-only: UPDATE and DELETE are refused.
CREATE FUNCTION "audit_log_append_only"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'audit_log is append-only';
END;
$$;
--> statement-breakpoint
CREATE TRIGGER "audit_log_no_update" BEFORE UPDATE ON "audit_log" FOR EACH ROW EXECUTE FUNCTION "audit_log_append_only"();
--> statement-breakpoint
CREATE TRIGGER "audit_log_no_delete" BEFORE DELETE ON "audit_log" FOR EACH ROW EXECUTE FUNCTION "audit_log_append_only"();
--> statement-breakpoint
-- The change counter (schema.ts, `change_counter`): raised in the changing transaction itself by
-- any change to what the service keeps in memory between requests, from any node or connection.
-- Once per statement: a statement that changes many rows needs one raise, not one per row.
INSERT INTO "change_counter" ("id", "value") VALUES (1, 0);
--> statement-breakpoint
CREATE FUNCTION "raise_change_counter"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE "change_counter" SET "value" = "value" + 1 WHERE "id" = 1;
  RETURN NULL;
END;
$$;
--> statement-breakpoint
CREATE TRIGGER "records_checked_columns_changed" AFTER UPDATE OF "id", "org_id", "signer_type", "doc_hash", "signed_at_ms", "signer_fingerprint", "signature", "seal_fingerprint", "seal_signature" ON "records" FOR EACH STATEMENT EXECUTE FUNCTION "raise_change_counter"();
--> statement-breakpoint
CREATE TRIGGER "records_deleted" AFTER DELETE ON "records" FOR EACH STATEMENT EXECUTE FUNCTION "raise_change_counter"();
--> statement-breakpoint
CREATE TRIGGER "signing_keys_changed" AFTER UPDATE OR DELETE ON "signing_keys" FOR EACH STATEMENT EXECUTE FUNCTION "raise_change_counter"();
--> statement-breakpoint
CREATE TRIGGER "organisations_changed" AFTER UPDATE OR DELETE ON "organisations" FOR EACH STATEMENT EXECUTE FUNCTION "raise_change_counter"();
--> statement-breakpoint
CREATE TRIGGER "api_keys_credential_changed" AFTER UPDATE OF "key_id", "org_id", "environment", "scopes", "secret_digest", "revoked_at" ON "api_keys" FOR EACH STATEMENT EXECUTE FUNCTION "raise_change_counter"();
--> statement-breakpoint
CREATE TRIGGER "api_keys_deleted" AFTER DELETE ON "api_keys" FOR EACH STATEMENT EXECUTE FUNCTION "raise_change_counter"();
--> statement-breakpoint
CREATE TRIGGER "persons_standing_changed" AFTER UPDATE OF "id", "org_id", "name", "suspended", "key_fingerprint" ON "persons" FOR EACH STATEMENT EXECUTE FUNCTION "raise_change_counter"();
--> statement-breakpoint
CREATE TRIGGER "persons_deleted" AFTER DELETE ON "persons" FOR EACH STATEMENT EXECUTE FUNCTION "raise_change_counter"();
