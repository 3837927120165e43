-- Two-phase commit, PL/pgSQL dynamic EXECUTE, and a statement prepared,
-- used and deallocated in one transaction.
BEGIN;
UPDATE accounts SET balance = balance - 100 WHERE id = 1;
PREPARE TRANSACTION 'transfer_42';
COMMIT PREPARED 'transfer_42';
ROLLBACK PREPARED 'transfer_41';

BEGIN;
PREPARE tx_q (int) AS SELECT * FROM orders WHERE id = $1;
EXECUTE tx_q(1);
EXPLAIN ANALYZE EXECUTE tx_q(2);
DEALLOCATE tx_q;
COMMIT;

BEGIN;
PREPARE tx_a AS SELECT 1;
PREPARE tx_b AS SELECT 2;
EXECUTE tx_a;
EXECUTE tx_b;
DEALLOCATE ALL;
COMMIT;

CREATE FUNCTION app.dyn(tbl text) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
  n bigint;
BEGIN
  EXECUTE format('SELECT count(*) FROM %I', tbl) INTO n;
  EXECUTE 'SELECT count(*) FROM ' || quote_ident(tbl) INTO n;
  EXECUTE 'ANALYZE ' || tbl;
  RETURN n;
END;
$$;

DO $$
BEGIN
  EXECUTE 'UPDATE settings SET v = 1';
END
$$;

CREATE TRIGGER t AFTER INSERT ON orders FOR EACH ROW EXECUTE PROCEDURE app.notify();
CREATE TRIGGER t2 AFTER INSERT ON orders FOR EACH ROW EXECUTE FUNCTION app.notify();
GRANT EXECUTE ON FUNCTION app.dyn(text) TO app_user;
REVOKE EXECUTE ON ALL FUNCTIONS IN SCHEMA public FROM PUBLIC;
ALTER DEFAULT PRIVILEGES GRANT EXECUTE ON FUNCTIONS TO app_user;
SELECT * FROM pg_prepared_statements;
SELECT * FROM pg_prepared_xacts;
SELECT 'PREPARE q AS SELECT 1' AS sql_text;
-- EXECUTE get_user(1);
CREATE TABLE statements (prepare text, execute text, deallocate text);
