/**
 * The product's version (from package.json, bundled at build time) and the commit it was
 * built from, which `npm run build` defines with `--define`; a source run says "source".
 */
import pkg from "../package.json" with { type: "json" };

declare const DOCVERIFY_COMMIT: string | undefined;

export const VERSION: string = pkg.version;
export const COMMIT: string = typeof DOCVERIFY_COMMIT === "string" ? DOCVERIFY_COMMIT : "source";
