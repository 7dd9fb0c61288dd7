/**
 * Loaded before the first test file of every `bun test` run (bunfig.toml `[test] preload`). Its
 * hooks are the run's own, not a file's: `afterAll` here runs once, after the last file. What a
 * whole run shares is removed here: the product's build (build.ts).
 */
import { afterAll } from "bun:test";
import { removeProductBuild } from "./build.ts";

afterAll(removeProductBuild);
