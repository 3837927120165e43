-- Deploy ledger:rebuild_balances to pg
-- requires: ledger

BEGIN;

SET TRANSACTION ISOLATION LEVEL SERIALIZABLE;

-- Serialise against other rebuilds. The lock is released below, in the
-- same transaction; if anything fails in between it is not.
SELECT pg_advisory_lock(hashtext('ledger.rebuild_balances')); -- want advisory-lock-session:warning

CREATE TEMPORARY TABLE entry_totals (
    account_id bigint,
    currency   char(3),
    total      numeric(18,4)
) ON COMMIT DROP;

INSERT INTO entry_totals
SELECT account_id, currency, sum(amount)
FROM ledger.entries
GROUP BY account_id, currency;

UPDATE ledger.balances b
   SET balance = t.total
  FROM entry_totals t
 WHERE t.account_id = b.account_id
   AND t.currency = b.currency;

-- Staging for the audit export keeps its rows until ... the pooled
-- connection is reused by someone else.
CREATE TEMP TABLE rebuild_audit (account_id bigint, diff numeric) ON COMMIT DELETE ROWS; -- want temp-table:error

SELECT pg_advisory_unlock(hashtext('ledger.rebuild_balances'));

SELECT pg_advisory_xact_lock(hashtext('ledger.balances'));

COMMIT;
