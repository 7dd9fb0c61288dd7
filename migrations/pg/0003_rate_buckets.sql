-- Rate limits across nodes (decisions §12): one token bucket per limited thing (a client IP, a key,
-- an organisation), shared by every node. Not in pg-schema.ts: an embedded database has one node,
-- whose buckets live in its memory. Only src/storage/pg-rate.ts calls it.
--
-- Nodes do not ask for each request: they lease a few tokens at a time with
-- docverify_rate_lease, spend them locally and give back what they did not spend. The bucket is
-- refilled here, from the database's clock, so the nodes' clocks do not matter.
CREATE TABLE "rate_buckets" (
	"bucket" text PRIMARY KEY NOT NULL,
	"per_minute" integer NOT NULL,
	"tokens" double precision NOT NULL,
	"at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE INDEX "rate_buckets_at" ON "rate_buckets" ("at");
--> statement-breakpoint
-- Gives back `give_back` tokens, then leases up to `want` whole tokens from the refilled bucket
-- (created full). A changed limit starts the bucket full at the new limit, as in one node.
-- Returns what was granted and what is left.
CREATE FUNCTION "docverify_rate_lease"(p_bucket text, p_per_minute integer, p_want integer, p_give_back double precision)
RETURNS TABLE (granted integer, remaining double precision) LANGUAGE plpgsql AS $$
DECLARE
  now_ts timestamptz := clock_timestamp();
  cur "rate_buckets"%ROWTYPE;
  level double precision;
  g integer;
BEGIN
  INSERT INTO "rate_buckets" ("bucket", "per_minute", "tokens", "at") VALUES (p_bucket, p_per_minute, p_per_minute, now_ts)
    ON CONFLICT ("bucket") DO NOTHING;
  SELECT * INTO cur FROM "rate_buckets" WHERE "bucket" = p_bucket FOR UPDATE;
  IF cur."per_minute" <> p_per_minute THEN
    level := p_per_minute;
  ELSE
    level := LEAST(p_per_minute, cur."tokens" + GREATEST(0, EXTRACT(EPOCH FROM (now_ts - cur."at"))) * p_per_minute / 60.0);
  END IF;
  level := LEAST(p_per_minute, level + GREATEST(0, p_give_back));
  g := GREATEST(0, LEAST(p_want, FLOOR(level)::integer));
  UPDATE "rate_buckets" SET "per_minute" = p_per_minute, "tokens" = level - g, "at" = now_ts WHERE "bucket" = p_bucket;
  RETURN QUERY SELECT g, level - g;
END;
$$;
