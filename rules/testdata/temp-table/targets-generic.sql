-- target: generic
CREATE TEMP TABLE import_rows (id int); -- want temp-table:error
