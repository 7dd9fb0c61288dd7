/**
 * The enrolment and signing pages' scripts as text (app-enrol.d.ts, app-sign.d.ts say so to
 * TypeScript), in a module of their own: person-pages.ts imports it at the first request for a
 * script, so the 640 KB of source are not read into memory at start (docs/benchmarks.md "Idle
 * memory").
 */
import ENROL_JS from "./app-enrol.js" with { type: "text" };
import SIGN_JS from "./app-sign.js" with { type: "text" };

if (typeof ENROL_JS !== "string" || typeof SIGN_JS !== "string") throw new Error("the app pages' scripts were not imported as text");

export { ENROL_JS, SIGN_JS };
