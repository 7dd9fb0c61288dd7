/**
 * The database was written by a newer docverify (it has a migration this binary does not know):
 * refused before anything runs (migrate.ts, pg-migrate.ts). In a module of its own so that the
 * executable's entry point can tell it apart without loading the migrations or the query builder.
 */
export class SchemaTooNewError extends Error {
  override readonly name = "SchemaTooNewError";
}
