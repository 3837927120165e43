-- V4: columns for the legacy (MySQL) import. Ported by hand from the old
-- migration; one statement still has the MySQL spelling.

ALTER TABLE billing.customers ADD COLUMN legacy_id integer;
ALTER TABLE billing.customers ADD COLUMN legacy_source text;

ALTER TABLE billing.customers MODIFY COLUMN legacy_id bigint; -- want parse-error:info

CREATE UNIQUE INDEX customers_legacy_idx ON billing.customers (legacy_source, legacy_id)
    WHERE legacy_id IS NOT NULL;

-- Backfill through a session-local staging table.
CREATE TEMP TABLE legacy_customers ( -- want temp-table:error
    legacy_id  bigint,
    email      text,
    country    text
);

INSERT INTO billing.customers (external_ref, email, country, legacy_id, legacy_source)
SELECT 'legacy-' || legacy_id, email, upper(coalesce(country, 'de')), legacy_id, 'mysql'
FROM legacy_customers
ON CONFLICT (external_ref) DO NOTHING;

SELECT currval('billing.customers_id_seq') AS last_imported; -- want sequence-session:error

UPDATE billing.customers SET country = 'DE' WHERE country = '' ;

-- Kunden aus dem Altsystem übernehmen (顧客データの移行). Nur ein Lauf gleichzeitig.
SELECT 'Übernahme läuft — 顧客データ移行中 ✓', pg_try_advisory_lock(4711) AS gesperrt; -- want advisory-lock-session:error

SET session_replication_role = replica; -- pgpoolcheck:ignore session-set one-off import on a direct connection
UPDATE billing.customers
   SET email = lower(email)
 WHERE legacy_source = 'mysql'
   AND email <> lower(email);

SELECT 'Готово: ' || count(*) || ' клиентов', pg_advisory_unlock(4711) FROM billing.customers WHERE legacy_source = 'mysql'; -- want advisory-lock-session:info
