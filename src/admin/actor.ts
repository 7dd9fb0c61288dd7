/**
 * Who made an administrative change, for the audit trail. One function for the command line and
 * the terminal UI, so both write the same form.
 */
import { readFileSync } from "node:fs";

/**
 * The OS user making the change: the login name (the invoking user under sudo) and the
 * effective uid, which cannot be set from the environment. `os:<name> (uid N)`.
 *
 * Without SUDO_USER, USER or LOGNAME (a container, a systemd unit without User=, `env -i`), the
 * name is the uid's in the passwd database; only when that has none either is it `os:uid N`.
 */
export function osActor(env: Readonly<Record<string, string | undefined>>, lookup: (uid: number) => string | null = passwdName): string {
  const uid = process.geteuid?.();
  const named = [env.SUDO_USER, env.USER, env.LOGNAME].find((n) => n !== undefined && n !== "");
  const name = named ?? (uid === undefined ? null : lookup(uid));
  if (name === null || name === undefined) return `os:uid ${uid ?? "?"}`;
  return `os:${name} (uid ${uid ?? "?"})`;
}

/** A user name as the passwd database may hold it: printable, no separators or spaces. */
const USER_NAME = /^[^\s:\p{Cc}\p{Cf}]{1,64}$/u;

/** The name of the entry for `uid` in passwd lines (`name:x:uid:gid:…`), or null. */
function nameIn(lines: string, uid: number): string | null {
  for (const line of lines.split("\n")) {
    const [name, , id] = line.split(":");
    if (id !== undefined && Number(id) === uid && name !== undefined && USER_NAME.test(name)) return name;
  }
  return null;
}

/**
 * The user name of `uid` in the passwd database. Bun's os.userInfo() answers from USER and says
 * "unknown" without it, so the database is asked itself: through `getent`, which goes through NSS
 * (users from LDAP or sssd too), else `/etc/passwd`. Run only when the environment names nobody.
 */
export function passwdName(uid: number): string | null {
  try {
    const p = Bun.spawnSync(["getent", "passwd", String(uid)], { stdin: "ignore", stdout: "pipe", stderr: "ignore", timeout: 2000 });
    if (p.exitCode === 0) {
      const name = nameIn(p.stdout.toString(), uid);
      if (name !== null) return name;
    }
  } catch {
    /* no getent here: read the file */
  }
  try {
    return nameIn(readFileSync("/etc/passwd", "utf8"), uid);
  } catch {
    return null;
  }
}
