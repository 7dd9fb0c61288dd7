/**
 * Who made an administrative change, for the audit trail. One function for the command line and
 * the terminal UI, so both write the same form.
 */
import { userInfo } from "node:os";

/**
 * The OS user making the change: the login name (the invoking user under sudo) and the
 * effective uid, which cannot be set from the environment. `os:<name> (uid N)`.
 */
export function osActor(env: Readonly<Record<string, string | undefined>>): string {
  let name = env.SUDO_USER ?? env.USER ?? env.LOGNAME;
  if (name === undefined || name === "") {
    try {
      name = userInfo().username;
    } catch {
      name = "unknown";
    }
  }
  return `os:${name} (uid ${process.geteuid?.() ?? "?"})`;
}
