/**
 * What a whole `bun test` run shares (the product's build, one PostgreSQL server) belongs to no
 * test file, so no file's cleanup() may undo it: it is undone after the run's last file, by the
 * preload's afterAll (preload.ts, bunfig.toml `[test] preload`), newest first. `npm test` runs two
 * worker processes (`--parallel=2 --no-isolate`): each is such a run of its own, with its own
 * shared things, undone after its own last file.
 */
const undo: (() => unknown)[] = [];

export function atRunEnd(fn: () => unknown): void {
  undo.push(fn);
}

export async function runEnd(): Promise<void> {
  while (undo.length > 0) await undo.pop()!();
}
