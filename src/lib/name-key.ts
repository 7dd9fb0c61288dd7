/**
 * The key organisation names are compared by: two names with the same key are one name, and an
 * appliance holds at most one organisation under it (`organisations.name_key`, a unique index).
 * Verifiers see the name (the verify pages, receipts, trust files, /.well-known/docverify.json),
 * so names they could not tell apart must not name two organisations.
 *
 * The rule: Unicode NFKC, then `String.prototype.toLowerCase()` (Unicode's default lowercase
 * mapping, the same in every locale). NFKC makes a precomposed "é" and "e" + U+0301 one, and
 * folds compatibility forms: full-width letters ("ＡＣＭＥ"), ligatures ("ﬁ"), superscripts, the
 * no-break space. Lowercasing then makes "ACME", "Acme" and "acme" one. Nothing else is folded:
 * "Straße" and "Strasse", or "Acme Ltd" and "Acme  Ltd" (two spaces), stay different names.
 *
 * Computed here in code on both engines, never in SQL: SQLite's lower() folds ASCII only and has
 * no NFKC, and PostgreSQL's lower() follows the database's collation; one key must not be
 * computed two ways.
 */
export function nameKey(name: string): string {
  return name.normalize("NFKC").toLowerCase();
}
