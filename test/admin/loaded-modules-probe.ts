/**
 * Preloaded (`bun --preload`) into a command run by loaded-modules.test.ts: as the process exits,
 * writes every module it loaded (Bun's `require.cache` holds ES modules too, by absolute path)
 * to the file named by LOADED_MODULES_OUT, one per line.
 */
import { writeFileSync } from "node:fs";

const out = process.env.LOADED_MODULES_OUT;
if (out !== undefined) process.on("exit", () => writeFileSync(out, Object.keys(require.cache).join("\n")));
