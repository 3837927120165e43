-- Monthly revenue report.
-- Run by the reporting worker over its pooled connection:
--   psql "$REPORTING_URL" -f reports/monthly_revenue.sql
-- Every statement below is its own transaction unless wrapped in BEGIN.

SET work_mem = '256MB'; -- want session-set:error
SET TIME ZONE 'UTC'; -- want session-set:info
SET DateStyle = ISO, YMD; -- want session-set:info
SET IntervalStyle = 'iso_8601'; -- want session-set:info
SET jit = off; -- want session-set:error

-- 1. Paid invoices of the month, staged in a temp table that the next
--    statements read (on possibly another server connection).
CREATE TEMP TABLE month_invoices AS -- want temp-table:error
SELECT i.id,
       i.customer_id,
       i.currency,
       i.amount_cents,
       date_trunc('month', i.paid_at) AS month
FROM billing.invoices i
WHERE i.paid_at >= date_trunc('month', now() - interval '1 month')
  AND i.paid_at <  date_trunc('month', now());

CREATE INDEX ON month_invoices (customer_id);
ANALYZE month_invoices;

-- 2. Per-customer totals
SELECT c.country,
       m.customer_id,
       sum(m.amount_cents) / 100.0 AS revenue,
       count(*)                    AS invoices
INTO TEMP customer_revenue -- want temp-table:error
FROM month_invoices m
JOIN billing.customers c ON c.id = m.customer_id
GROUP BY c.country, m.customer_id;

SELECT country, customer_id, revenue
INTO TEMPORARY TABLE top_customers -- want temp-table:error
FROM customer_revenue
ORDER BY revenue DESC
LIMIT 100;

-- 3. FX conversion with a prepared statement, executed per currency.
PREPARE fx_total (char(3), numeric) AS -- want sql-prepare:error
    SELECT $1 AS currency, sum(amount_cents) / 100.0 * $2 AS eur
    FROM month_invoices
    WHERE currency = $1;

EXECUTE fx_total('EUR', 1.0); -- want sql-prepare:error
EXECUTE fx_total('USD', 0.92); -- want sql-prepare:error
EXECUTE fx_total('GBP', 1.17); -- want sql-prepare:error
EXPLAIN (ANALYZE, BUFFERS) EXECUTE fx_total('CHF', 1.04); -- want sql-prepare:error
DEALLOCATE fx_total; -- want sql-prepare:error

PREPARE country_share (text) AS -- want sql-prepare:error
    SELECT country, sum(revenue) FROM customer_revenue WHERE country = $1 GROUP BY country;
CREATE TEMP TABLE de_share AS EXECUTE country_share('DE'); -- want temp-table:error sql-prepare:error
-- pgpoolcheck:ignore temp-table,sql-prepare same statement as above, kept for the FR desk until Q3
CREATE TEMP TABLE fr_share AS EXECUTE country_share('FR');
DEALLOCATE PREPARE country_share; -- want sql-prepare:error
DEALLOCATE ALL; -- want sql-prepare:info

-- 4. Persist the result. INSERT … RETURNING hands back the id directly.
INSERT INTO reporting.monthly_reports (month, generated_at, total_eur)
SELECT date_trunc('month', now() - interval '1 month'), now(), sum(revenue)
FROM customer_revenue
RETURNING id;

-- The old way: read the id back afterwards, in another transaction.
INSERT INTO reporting.monthly_reports (month, generated_at, total_eur)
VALUES (date_trunc('month', now() - interval '1 month'), now(), 0);
SELECT currval(pg_get_serial_sequence('reporting.monthly_reports', 'id')) AS report_id; -- want sequence-session:error
SELECT lastval(); -- want sequence-session:error

-- The same, but inside one explicit transaction: fine.
BEGIN;
INSERT INTO reporting.monthly_reports (month, generated_at, total_eur)
VALUES (date_trunc('month', now() - interval '2 month'), now(), 0);
SELECT currval(pg_get_serial_sequence('reporting.monthly_reports', 'id')) AS report_id;
INSERT INTO reporting.monthly_report_lines (report_id, customer_id, revenue)
SELECT lastval(), customer_id, revenue FROM top_customers;
COMMIT;

-- 5. Stream the detail rows to the exporter with a cursor that survives
--    the COMMIT.
BEGIN;
DECLARE detail_rows NO SCROLL CURSOR WITH HOLD FOR -- want cursor-with-hold:error
    SELECT m.*, c.external_ref
    FROM month_invoices m
    JOIN billing.customers c ON c.id = m.customer_id
    ORDER BY m.id;
COMMIT;

FETCH FORWARD 5000 FROM detail_rows;
FETCH FORWARD 5000 FROM detail_rows;
CLOSE detail_rows;

-- A plain cursor inside one transaction is fine.
BEGIN;
DECLARE summary_rows CURSOR FOR SELECT * FROM top_customers;
FETCH 50 FROM summary_rows;
CLOSE summary_rows;
COMMIT;

-- A WITH HOLD cursor closed before the COMMIT is fine too.
BEGIN;
DECLARE country_rows BINARY CURSOR WITH HOLD FOR
    SELECT country, sum(revenue) FROM customer_revenue GROUP BY country;
FETCH ALL FROM country_rows;
CLOSE country_rows;
COMMIT;

-- 6. Consistent snapshot for the summary e-mail.
SET SESSION CHARACTERISTICS AS TRANSACTION ISOLATION LEVEL REPEATABLE READ; -- want session-set:error
BEGIN READ ONLY;
SET TRANSACTION ISOLATION LEVEL SERIALIZABLE, DEFERRABLE;
CREATE TEMP TABLE email_summary AS -- want temp-table:error
    SELECT country, sum(revenue) AS revenue, count(*) AS customers
    FROM customer_revenue
    GROUP BY country;
EXPLAIN (ANALYZE, COSTS OFF) SELECT * FROM email_summary ORDER BY revenue DESC;
COMMIT;

DROP TABLE IF EXISTS email_summary, month_invoices, customer_revenue, top_customers, de_share, fr_share;
RESET work_mem; -- want session-set:warning
