-- target: pgpoolcheck
CREATE TEMP TABLE import_rows (id int); -- want temp-table:warning
SELECT * INTO TEMP t2 FROM orders; -- want temp-table:warning
