-- Any object created in schema pg_temp lives in the session's temporary
-- schema, not only tables, views, sequences and functions.
CREATE DOMAIN pg_temp.positive_int AS int CHECK (VALUE > 0); -- want temp-table:error
CREATE TYPE pg_temp.money_pair AS (amount numeric, currency text); -- want temp-table:error
CREATE TYPE pg_temp.job_state AS ENUM ('queued', 'running', 'done'); -- want temp-table:error
CREATE TYPE pg_temp.score_range AS RANGE (subtype = float8); -- want temp-table:error
CREATE OPERATOR pg_temp.=== (leftarg = int4, rightarg = int4, function = int4eq); -- want temp-table:error
CREATE AGGREGATE pg_temp.total(int) (sfunc = int4pl, stype = int); -- want temp-table:error

-- the same objects in a regular schema are not temporary
CREATE DOMAIN app.positive_int AS int CHECK (VALUE > 0);
CREATE TYPE app.money_pair AS (amount numeric, currency text);
CREATE TYPE job_state AS ENUM ('queued', 'running', 'done');
CREATE OPERATOR app.=== (leftarg = int4, rightarg = int4, function = int4eq);
CREATE AGGREGATE app.total(int) (sfunc = int4pl, stype = int);

-- created and dropped in one transaction
BEGIN;
CREATE TYPE pg_temp.row_pair AS (a int, b int);
CREATE DOMAIN pg_temp.short_text AS text CHECK (length(VALUE) < 10);
SELECT ROW(1, 2)::pg_temp.row_pair;
DROP TYPE pg_temp.row_pair;
DROP DOMAIN pg_temp.short_text;
COMMIT;

-- dropped in a later transaction: the DROP may run on another connection
CREATE TYPE pg_temp.scratch_pair AS (a int, b int); -- want temp-table:error
DROP TYPE pg_temp.scratch_pair;

-- collations and text search objects too
CREATE COLLATION pg_temp.german_phonebook (provider = icu, locale = 'de-u-co-phonebk'); -- want temp-table:error
CREATE TEXT SEARCH CONFIGURATION pg_temp.plain_cfg (parser = default); -- want temp-table:error
CREATE TEXT SEARCH DICTIONARY pg_temp.plain_dict (template = simple); -- want temp-table:error
