-- target: rds-proxy
CREATE TEMP TABLE import_rows (id int); -- want temp-table:warning
