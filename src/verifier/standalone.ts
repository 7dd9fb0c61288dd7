/**
 * The standalone verifier, `dist/docverify-verify.mjs` (scripts/build.ts bundles this file with
 * @noble/* into one file for Node.js 20): `node docverify-verify.mjs RECEIPT …`, the same
 * arguments, output and exit codes as `docverify verify-receipt`.
 */
import { nodeIo, runVerifyReceipt } from "./cli.ts";

// exitCode, not exit(): stdout is flushed before Node.js leaves.
process.exitCode = await runVerifyReceipt(process.argv.slice(2), nodeIo());
