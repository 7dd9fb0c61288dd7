/**
 * The statement with which verification read a hash of more than 100 records before migration
 * 0006 (records_anchored_by_class), kept for tests as an oracle: every anchored record of the
 * hash numbered in consensus order overall and within its verdict class, of which the first 100
 * and the first of each class were read whole. It needs no index but records_doc_hash, so it
 * also runs on a database as the previous release left it.
 */
export const WINDOW_PASS_SQL = `WITH anchored AS (
    SELECT id,
           row_number() OVER (ORDER BY length(consensus_at), consensus_at, id) AS position,
           row_number() OVER (PARTITION BY CASE WHEN revoked_at IS NOT NULL THEN 2 WHEN signer_type = 'user' THEN 0 ELSE 1 END
                              ORDER BY length(consensus_at), consensus_at, id) AS rank_in_class
      FROM records INDEXED BY records_doc_hash
     WHERE doc_hash = ?1 AND anchor_state = 'anchored'
  )
  SELECT id, position FROM anchored WHERE position <= ?2 OR rank_in_class = 1 ORDER BY position`;
