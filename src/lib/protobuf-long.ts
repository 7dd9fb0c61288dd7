/**
 * Imported before anything that loads `@hashgraph/proto` or the SDK's `@hiero-ledger/proto`.
 * protobufjs finds its 64-bit integer class `long` through a dynamic `require` that a bundle
 * (the compiled executable) does not have; both proto packages then patch it in themselves and
 * announce it with `console.log` on stdout, which would corrupt `--json` answers and the
 * JSON-lines log. Setting it first, the way they do, keeps stdout clean.
 */
import Long from "long";
import * as protobuf from "protobufjs/minimal.js";

const util = (protobuf as unknown as { util: { Long: unknown }; configure?: () => void; default?: { util: { Long: unknown }; configure?: () => void } });
const root = util.util !== undefined ? util : util.default!;
// Also when protobufjs did find *a* `long`: a compiled executable run from a folder that holds
// node_modules/long can pick up that copy through the dynamic require, in a module shape whose
// `fromBits` is not where protobufjs looks. Ours is the bundled, known one.
const current = root.util.Long as { fromBits?: unknown } | null | undefined;
if (current !== Long && typeof current?.fromBits !== "function") {
  root.util.Long = Long;
  root.configure?.();
}
