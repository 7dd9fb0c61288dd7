-- Several nodes (decisions §12). Neither table is in pg-schema.ts: an embedded database has one
-- node and no leader, so SQLite has no counterpart, and only src/storage/pg-leadership.ts reads
-- and writes them (raw SQL, confined to storage/).
--
-- The anchor loop's leader: one row. `epoch` rises by one each time a node takes the lead; every
-- change to the ledger queue is made under the epoch it was decided in, and checked against this
-- row (read FOR SHARE in the same transaction), so a deposed leader's late writes change nothing.
-- `seen_at` is the leader's heartbeat, in the database's own clock.
CREATE TABLE "anchor_leader" (
	"id" integer PRIMARY KEY NOT NULL CHECK ("id" = 1),
	"epoch" bigint NOT NULL,
	"node" text,
	"since" timestamp with time zone,
	"seen_at" timestamp with time zone
);
--> statement-breakpoint
INSERT INTO "anchor_leader" ("id", "epoch") VALUES (1, 0);
--> statement-breakpoint
-- Every node's heartbeat, for `docverify status`: a node is live while `seen_at` is recent.
CREATE TABLE "nodes" (
	"name" text PRIMARY KEY NOT NULL,
	"version" text NOT NULL,
	"started_at" timestamp with time zone NOT NULL,
	"seen_at" timestamp with time zone NOT NULL
);
