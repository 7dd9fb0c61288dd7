/**
 * Receipts end to end on serve's embedded ledger (two mirror ports): verified and revoked in
 * `docverify verify-receipt`, `node docverify-verify.mjs` and the page, with serve stopped (the
 * ledger brought back alone on serve's data folder, at the same addresses). See e2e-rig.ts.
 */
import { afterAll } from "bun:test";
import { cleanup } from "../support/env.ts";
import { serveStoppedSuite } from "./e2e-rig.ts";

afterAll(cleanup);

serveStoppedSuite("embedded");
