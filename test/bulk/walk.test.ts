/**
 * walk: which files a bulk command sees in a folder, in which order, with which globs, and how
 * what cannot be read is reported (yielded with an error, never thrown); the same under Node.js 20.
 */
import { afterAll, expect, test } from "bun:test";
import { chmodSync, mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { compileGlob, expandBraces } from "../../src/bulk/glob.ts";
import { walk, type WalkEntry, type WalkOptions } from "../../src/bulk/walk.ts";
import { cleanup, onCleanup, tempDir } from "../support/env.ts";
import { requireProgram } from "../support/programs.ts";
import { bulkForNode, runNode } from "./node-bundle.ts";

afterAll(cleanup);

async function list(paths: string[], options?: WalkOptions): Promise<WalkEntry[]> {
  const out: WalkEntry[] = [];
  for await (const entry of walk(paths, options)) out.push(entry);
  return out;
}

/** A folder with files at several depths, links, a dangling link, a loop, a FIFO and a socket. */
async function tree(): Promise<string> {
  const root = join(tempDir(), "docs");
  for (const dir of ["sub/2025", "sub/2024", "node_modules/pkg", "empty"]) mkdirSync(join(root, dir), { recursive: true });
  for (const file of ["a.pdf", "b.txt", ".hidden.pdf", "sub/2025/x.pdf", "sub/2025/y.txt", "sub/2024/z.pdf", "node_modules/pkg/m.pdf", "B.pdf", "é.pdf"]) writeFileSync(join(root, file), file);
  symlinkSync("a.pdf", join(root, "link-to-a.pdf"));
  symlinkSync("nowhere.pdf", join(root, "dangling.pdf"));
  symlinkSync("..", join(root, "sub", "up"));
  symlinkSync("sub/2024", join(root, "linkdir"));
  symlinkSync("self.pdf", join(root, "self.pdf"));
  const fifo = Bun.spawnSync({ cmd: [requireProgram("mkfifo"), join(root, "fifo.pdf")] });
  if (fifo.exitCode !== 0) throw new Error(`mkfifo failed: ${fifo.stderr.toString()}`);
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(join(root, "socket.pdf"), resolve));
  onCleanup(() => new Promise((resolve) => server.close(resolve)));
  return root;
}

const rel = (root: string, entries: WalkEntry[]) => entries.map((e) => (e.error === undefined ? e.path.slice(root.length + 1) : `${e.path.slice(root.length + 1)} ! ${e.error}`));

test("a folder: every file, depth first in code-unit order, links followed, what cannot be read yielded with its reason", async () => {
  const root = await tree();
  expect(rel(root, await list([root]))).toEqual([
    ".hidden.pdf",
    "B.pdf",
    "a.pdf",
    "b.txt",
    'dangling.pdf ! dangling symbolic link: its target "nowhere.pdf" does not exist',
    "fifo.pdf ! not a regular file (a FIFO)",
    "link-to-a.pdf",
    "linkdir/z.pdf",
    "node_modules/pkg/m.pdf",
    "self.pdf ! symbolic link loop (too many levels of links) (ELOOP)",
    "socket.pdf ! not a regular file (a socket)",
    "sub/2024/z.pdf",
    "sub/2025/x.pdf",
    "sub/2025/y.txt",
    "sub/up ! symbolic link loop: it leads back to a folder being walked, not followed",
    "é.pdf",
  ]);
});

test("globs match the path relative to the folder; a file argument always counts; each path once", async () => {
  const root = await tree();
  const files = async (options: WalkOptions, paths = [root]) => rel(root, await list(paths, options)).filter((p) => !p.includes(" ! "));
  expect(await files({ include: ["*.pdf"] })).toEqual([".hidden.pdf", "B.pdf", "a.pdf", "link-to-a.pdf", "linkdir/z.pdf", "node_modules/pkg/m.pdf", "sub/2024/z.pdf", "sub/2025/x.pdf", "é.pdf"]);
  expect(await files({ include: ["**/2025/**"] })).toEqual(["sub/2025/x.pdf", "sub/2025/y.txt"]);
  expect(await files({ include: ["sub/**/*.pdf"], exclude: ["**/2024/**"] })).toEqual(["sub/2025/x.pdf"]);
  expect(await files({ include: ["{a,b}.*", "[A-Z].pdf"] })).toEqual(["B.pdf", "a.pdf", "b.txt"]);
  expect(await files({ include: ["?.pdf"], exclude: ["[!a].pdf"] })).toEqual(["a.pdf"]);
  expect(await files({ exclude: ["node_modules/**", "sub/**", "linkdir/**", "*.txt", ".*"] })).toEqual(["B.pdf", "a.pdf", "link-to-a.pdf", "é.pdf"]);
  // A file named on the command line is taken whatever the patterns say, and once only.
  expect(await files({ include: ["*.pdf"] }, [join(root, "b.txt"), join(root, "sub/2024"), join(root, "sub/2024/z.pdf"), join(root, "sub/2025/x.pdf")])).toEqual(["b.txt", "sub/2024/z.pdf", "sub/2025/x.pdf"]);
  // An excluded folder is not entered: its loop is not even reported.
  expect(rel(root, await list([join(root, "sub")], { exclude: ["up/**"] }))).toEqual(["sub/2024/z.pdf", "sub/2025/x.pdf", "sub/2025/y.txt"]);
});

test("arguments that do not exist or cannot be read are yielded with the reason, in the order given", async () => {
  const root = await tree();
  expect(await list([join(root, "missing"), join(root, "dangling.pdf"), join(root, "empty"), join(root, "fifo.pdf"), join(root, "a.pdf")])).toEqual([
    { path: join(root, "missing"), error: "no such file or folder (ENOENT)" },
    { path: join(root, "dangling.pdf"), error: 'dangling symbolic link: its target "nowhere.pdf" does not exist' },
    { path: join(root, "fifo.pdf"), error: "not a regular file (a FIFO)" },
    { path: join(root, "a.pdf") },
  ]);
});

test("under Node.js 20 the walk is the same, and permissions are reported (as nobody)", async () => {
  const root = await tree();
  chmodSync(join(root, ".."), 0o755);
  mkdirSync(join(root, "locked"));
  writeFileSync(join(root, "locked", "in.pdf"), "x");
  chmodSync(join(root, "locked"), 0o000);
  writeFileSync(join(root, "private.pdf"), "x");
  chmodSync(join(root, "private.pdf"), 0o600);
  const script = `const out = []; for await (const e of bulk.walk([${JSON.stringify(root)}], { include: ["*.pdf"] })) out.push(e); console.log(JSON.stringify(out));`;
  const dir = await bulkForNode();
  expect(runNode(dir, script)).toEqual(await list([root], { include: ["*.pdf"] }));
  const asNobody = rel(root, runNode(dir, script, "nobody") as WalkEntry[]);
  expect(asNobody).toContain("locked ! cannot list this folder: permission denied (EACCES)");
  expect(asNobody).toContain("private.pdf ! permission denied (EACCES)");
  expect(asNobody).toContain("a.pdf");
});

test("the glob matcher", () => {
  expect(expandBraces("a{b,c{d,e}}f")).toEqual(["abf", "acdf", "acef"]);
  expect(expandBraces("{x}y{")).toEqual(["{x}y{"]);
  const yes = (pattern: string, path: string) => expect([pattern, path, compileGlob(pattern).matches(path)]).toEqual([pattern, path, true]);
  const no = (pattern: string, path: string) => expect([pattern, path, compileGlob(pattern).matches(path)]).toEqual([pattern, path, false]);
  yes("*.pdf", "a.pdf");
  yes("*.pdf", "deep/er/a.pdf");
  no("*.pdf", "a.pdfx");
  no("/a/*.pdf", "a/b/c.pdf");
  yes("./a/*.pdf", "a/c.pdf");
  yes("**/2025/**", "2025/a.pdf");
  yes("**/2025/**", "x/2025/y/a.pdf");
  no("**/2025/**", "x/20251/a.pdf");
  yes("a/**/b.pdf", "a/b.pdf");
  yes("a/**/b.pdf", "a/x/y/b.pdf");
  no("a/*/b.pdf", "a/x/y/b.pdf");
  yes("file?.pdf", "file1.pdf");
  no("file?.pdf", "file10.pdf");
  no("a?b", "a/b");
  yes("[a-c]*.pdf", "b1.pdf");
  no("[!a-c]*.pdf", "b1.pdf");
  no("x/[!a]", "x//");
  yes("{reports,invoices}/**/*.{pdf,PDF}", "invoices/2025/q1/INV.PDF");
  no("{reports,invoices}/**/*.{pdf,PDF}", "other/2025/INV.PDF");
  yes("a.pdf", "sub/a.pdf");
  yes("\\*.pdf", "*.pdf");
  no("\\*.pdf", "x.pdf");
  yes("[.pdf", "[.pdf");
  yes("(1)+$.pdf", "(1)+$.pdf");
});
