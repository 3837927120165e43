-- Deploy ledger:journal_numbers to pg
-- requires: ledger

BEGIN;

CREATE SEQUENCE ledger.journal_seq;

ALTER TABLE ledger.entries
    ADD COLUMN journal_no bigint;

-- Number the existing entries; the first journal gets the first value.
INSERT INTO ledger.entries (account_id, amount, currency, memo, journal_no)
VALUES (0, 0, 'EUR', 'journal start', nextval('ledger.journal_seq'));

UPDATE ledger.entries
   SET journal_no = currval('ledger.journal_seq')
 WHERE journal_no IS NULL;

ALTER TABLE ledger.entries
    ALTER COLUMN journal_no SET DEFAULT nextval('ledger.journal_seq');

COMMIT;

-- Outside the transaction: whatever connection answers this has never
-- called nextval on the sequence.
SELECT currval('ledger.journal_seq') AS last_journal_no; -- want sequence-session:error

BEGIN;
SELECT nextval('ledger.journal_seq') AS reserved, currval('ledger.journal_seq') AS check_value;
COMMIT;
