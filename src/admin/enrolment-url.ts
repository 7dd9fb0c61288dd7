/**
 * The address an enrolment link names (`{base}/enrol/{token}`), for `person add`, `person link` and
 * the terminal UI's persons screen. A link is useful only at an address where `serve` answers, so
 * without DOCVERIFY_PUBLIC_URL the command asks the data folder whether a serve runs on it
 * (`serve.json`, believed while that serve holds the data folder's lock) and names that serve's
 * address instead of this command's defaults. Each case without the setting comes with a notice
 * for stderr (or the screen): the link may not work where the person opens it.
 */
import type { Config } from "../config/index.ts";
import { runningServe } from "../storage/data-folder.ts";

export interface EnrolmentBase {
  /** Where the link points, without a trailing slash. */
  readonly url: string;
  /** What the administrator should know about that address; null when DOCVERIFY_PUBLIC_URL names it. */
  readonly notice: string | null;
}

/** Loopback, or the unspecified address (which a browser reaches only on this machine). */
function onlyHere(url: string): boolean {
  const host = new URL(url).hostname.replace(/^\[|\]$/g, "");
  return host === "localhost" || /^127\./.test(host) || host === "::1" || host === "0.0.0.0" || host === "::";
}

function reach(url: string): string {
  return onlyHere(url) ? "works only from this machine" : `works only where ${new URL(url).host} can be reached`;
}

/** Browsers make passkeys for a host name only: a link at an IP address opens a page that cannot enrol. */
function passkeys(url: string): string {
  const host = new URL(url).hostname;
  return /^[\d.]+$|^\[/.test(host) ? " A passkey also needs a host name, not an IP address: https, or http://localhost on this machine (docs/persons.md)." : "";
}

export function enrolmentBase(config: Config): EnrolmentBase {
  if (!config.publicUrlIsDefault) return { url: config.publicUrl, notice: null };
  const serve = runningServe(config.dataDir);
  if (serve !== null && serve.publicUrl !== null) {
    return {
      url: serve.publicUrl,
      notice: `DOCVERIFY_PUBLIC_URL is not set for this command: the link names ${serve.publicUrl}, the public address of the serve running on this data folder (pid ${serve.pid}).`,
    };
  }
  if (serve !== null) {
    return {
      url: serve.url,
      notice:
        `DOCVERIFY_PUBLIC_URL is not set: the link names ${serve.url}, the address the serve running on this data folder (pid ${serve.pid}) listens on, ` +
        `and ${reach(serve.url)}. For a link that works elsewhere, set DOCVERIFY_PUBLIC_URL to the address people reach, for serve and for this command.` +
        passkeys(serve.url),
    };
  }
  return {
    url: config.publicUrl,
    notice:
      `DOCVERIFY_PUBLIC_URL is not set and no serve runs on this data folder: the link uses the default address ${config.publicUrl} ` +
      `(DOCVERIFY_HOST:DOCVERIFY_PORT), which answers only while serve runs with these settings, and ${reach(config.publicUrl)}. ` +
      `Set DOCVERIFY_PUBLIC_URL to the address people reach for a link that works elsewhere.` +
      passkeys(config.publicUrl),
  };
}
