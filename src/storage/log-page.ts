/**
 * The verification log's page query (verification/log/ports.ts `LogPageQuery`) as the filter bits
 * and parameters of its statement (verification-statements.ts `logPage`, `logPageIds`): shared by
 * the SQLite and PostgreSQL log drivers.
 */
import type { LogPageQuery } from "../verification/log/ports.ts";
import { AFTER, FROM, HASH, TO, VERDICT } from "./verification-statements.ts";

/** Parameters in the statement's order: org, environment, [hash], [verdict], [id floor, from], [id ceiling, to], [after], limit. */
export function logPageArgs(query: LogPageQuery): { readonly mask: number; readonly args: (string | number)[] } {
  let mask = 0;
  const args: (string | number)[] = [query.orgId, query.environment];
  if (query.docHash !== undefined) (mask |= HASH), args.push(query.docHash);
  if (query.verdict !== undefined) (mask |= VERDICT), args.push(query.verdict);
  if (query.from !== undefined) (mask |= FROM), args.push(query.from.id, query.from.ms);
  if (query.to !== undefined) (mask |= TO), args.push(query.to.id, query.to.ms);
  if (query.before !== undefined) (mask |= AFTER), args.push(query.before);
  args.push(query.rows);
  return { mask, args };
}
