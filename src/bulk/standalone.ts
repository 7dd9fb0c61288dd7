/**
 * The standalone bulk client, `dist/docverify-client.mjs` (scripts/build-client.ts bundles this
 * file with the client package into one file for Node.js 20): `node docverify-client.mjs
 * authenticate|check|revoke …`, the same arguments, output and exit codes as `docverify
 * authenticate|check|revoke`.
 */
import { nodeClientIo, runClientCommand } from "./cli.ts";

// exitCode, not exit(): stdout is flushed before Node.js leaves.
process.exitCode = await runClientCommand(process.argv.slice(2), nodeClientIo());
