/**
 * A node bidding for the anchor loop's leadership, as a process the leadership tests can kill or
 * pause: `bun leader-node.ts URL NODE [POLL_MS STALE_MS]`. While it leads, it makes one fenced write
 * every 50 ms (a row in `fenced_writes`, which the test creates). It prints one JSON line per event
 * on stdout: lead, lose, deposed (a fenced write refused), wrote (every 20th write).
 */
import { createLogger } from "../../src/lib/log.ts";
import { DeposedError, fencedWrite, startLeadership } from "../../src/storage/pg-cluster.ts";
import { postgresStore } from "../../src/storage/pg-store.ts";
import { q } from "../../src/storage/store.ts";
import { sql } from "drizzle-orm";

const [url, node, poll, stale] = process.argv.slice(2);
const say = (event: string, extra: Record<string, unknown> = {}) => process.stdout.write(JSON.stringify({ event, node, at: Date.now(), ...extra }) + "\n");
const store = postgresStore(url!, { max: 3 });
const log = createLogger({ level: "error", write: (l) => process.stderr.write(l + "\n") });
const leadership = startLeadership(store, {
  node: node!,
  version: "test",
  log,
  ...(poll !== undefined ? { pollMs: Number(poll) } : {}),
  ...(stale !== undefined ? { staleMs: Number(stale) } : {}),
  onLead: (epoch) => say("lead", { epoch }),
  onLose: (epoch, reason) => say("lose", { epoch, reason }),
});

let writes = 0;
setInterval(() => {
  const epoch = leadership.current();
  if (epoch === null) return;
  fencedWrite(
    store,
    epoch,
    function* (tx) {
      yield* q(tx.execute(sql`INSERT INTO fenced_writes (epoch, node) VALUES (${epoch}, ${node})`));
    },
    ...(stale !== undefined ? [Math.floor(Number(stale) / 2)] : []),
  ).then(
    () => {
      if (++writes % 20 === 0) say("wrote", { epoch, writes });
    },
    (e: unknown) => say(e instanceof DeposedError ? "deposed" : "error", { epoch, message: (e as Error).message }),
  );
}, 50);
say("started");
process.on("SIGTERM", () => void leadership.stop().then(() => store.close()).then(() => process.exit(0)));
