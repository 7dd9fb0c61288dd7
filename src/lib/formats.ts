/**
 * The spellings the spec fixes, in one place: every module that checks one uses these.
 */

/** A DocHash (spec §2.1): `sha256:` and 64 lowercase hex digits; uppercase and bare digests are refused. */
export const DOC_HASH_PATTERN = "^sha256:[0-9a-f]{64}$";
export const DOC_HASH_RE = new RegExp(DOC_HASH_PATTERN);

/** A UUID in its one canonical spelling: lowercase, hyphenated, no braces. */
export const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
