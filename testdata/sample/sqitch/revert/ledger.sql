-- Revert ledger:ledger from pg

BEGIN;

SET LOCAL search_path = ledger, public;

DROP TABLE IF EXISTS balances;
DROP TABLE IF EXISTS entries;

-- Cursor over the accounts we still have to notify; read after COMMIT.
DECLARE orphaned_accounts CURSOR WITH HOLD FOR -- want cursor-with-hold:error
    SELECT DISTINCT account_id FROM ledger.account_owners;

COMMIT;

FETCH 100 FROM orphaned_accounts;
CLOSE orphaned_accounts;

BEGIN;
DECLARE leftovers CURSOR WITH HOLD FOR
    SELECT nspname FROM pg_namespace WHERE nspname LIKE 'ledger_%';
FETCH ALL FROM leftovers;
CLOSE leftovers;
COMMIT;

DROP SCHEMA IF EXISTS ledger CASCADE;
