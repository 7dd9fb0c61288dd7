/**
 * Receipts end to end on a `docverify local-ledger` process of its own (two mirror ports, named
 * to serve by DOCVERIFY_LOCAL_LEDGER_URL and DOCVERIFY_MIRROR_NODES): verified and revoked in
 * every shell, with serve stopped. See e2e-rig.ts.
 */
import { afterAll } from "bun:test";
import { cleanup } from "../support/env.ts";
import { serveStoppedSuite } from "./e2e-rig.ts";

afterAll(cleanup);

serveStoppedSuite("separate");
