/**
 * Loaded before the first test file of every `bun test` run (bunfig.toml `[test] preload`). Its
 * hooks are the run's own, not a file's: `afterAll` here runs once, after the last file, and
 * undoes what the run shared (run-end.ts).
 */
import { afterAll } from "bun:test";
import { runEnd } from "./run-end.ts";

afterAll(runEnd);
