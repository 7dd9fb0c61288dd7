-- What the anchor loop's leader anchored in its last back-pressure window (anchoring/back-pressure.ts),
-- written with its heartbeat. The other nodes take records too, and refuse them with 503 "behind"
-- only while the queue's unsubmitted rows outnumber what the leader anchors: without the leader's
-- figure they would compare against nothing and refuse as soon as 200 rows wait.
ALTER TABLE "anchor_leader" ADD COLUMN "anchored_recently" integer NOT NULL DEFAULT 0;
