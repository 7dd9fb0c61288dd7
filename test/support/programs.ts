/**
 * Programs some tests drive as a person would (Chromium, wrk, tmux). A missing one is
 * installed from Debian's packages when we can (CI runs as root); otherwise the test fails
 * with the install instruction. A test never passes by skipping.
 */
import { existsSync } from "node:fs";

const installed = new Map<string, string>();

/** Returns the program's path, installing `pkg` with apt-get if needed and possible. */
export function ensureProgram(program: string, pkg: string, candidates: string[] = [`/usr/bin/${program}`]): string {
  const known = installed.get(program);
  if (known !== undefined) return known;
  const find = () => candidates.find((p) => existsSync(p)) ?? Bun.which(program) ?? null;
  let path = find();
  if (path === null) {
    const isRoot = process.getuid?.() === 0;
    if (!isRoot) throw new Error(`${program} is required by this test: install it with  sudo apt-get install -y ${pkg}`);
    const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" };
    const lock = ["-o", "DPkg::Lock::Timeout=300"];
    const update = Bun.spawnSync(["apt-get", ...lock, "update", "-qq"], { env });
    const install = Bun.spawnSync(["apt-get", ...lock, "install", "-y", "-qq", pkg], { env });
    path = find();
    if (path === null) {
      throw new Error(
        `${program} is required by this test and installing it failed (apt-get install -y ${pkg}):\n` +
          update.stderr.toString() +
          install.stderr.toString(),
      );
    }
  }
  installed.set(program, path);
  return path;
}

export const CHROMIUM_ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

export function ensureChromium(): string {
  return ensureProgram("chromium", "chromium", ["/usr/bin/chromium", "/usr/bin/chromium-browser"]);
}
