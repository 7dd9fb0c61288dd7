/**
 * `JSON.stringify(text)` for a string, faster for the common case: text of printable ASCII
 * without `"` or `\` needs no escaping and is quoted as is; anything else (control characters,
 * quotes, backslashes, non-ASCII, lone surrogates) goes through JSON.stringify. Same output always.
 */
const PLAIN = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;

export function jsonString(text: string): string {
  return PLAIN.test(text) ? `"${text}"` : JSON.stringify(text);
}
