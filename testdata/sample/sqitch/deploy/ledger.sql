-- Deploy ledger:ledger to pg
-- requires: appschema

BEGIN;

SET client_min_messages = 'warning'; -- want session-set:error
SET search_path TO ledger, public; -- want session-set:critical

CREATE TABLE ledger.entries (
    id          bigserial PRIMARY KEY,
    account_id  bigint       NOT NULL,
    amount      numeric(18,4) NOT NULL,
    currency    char(3)      NOT NULL,
    booked_at   timestamptz  NOT NULL DEFAULT now(),
    memo        text
);

CREATE INDEX entries_account_booked_idx ON ledger.entries (account_id, booked_at);

CREATE TABLE ledger.balances (
    account_id  bigint       NOT NULL,
    currency    char(3)      NOT NULL,
    balance     numeric(18,4) NOT NULL DEFAULT 0,
    PRIMARY KEY (account_id, currency)
);

-- Initial balances from the opening entries, staged in a table that is
-- dropped at COMMIT.
CREATE TEMP TABLE opening_balances ON COMMIT DROP AS
    SELECT account_id, currency, sum(amount) AS balance
    FROM ledger.entries
    WHERE memo = 'opening'
    GROUP BY account_id, currency;

INSERT INTO ledger.balances (account_id, currency, balance)
SELECT account_id, currency, balance FROM opening_balances;

SET CONSTRAINTS ALL DEFERRED;
SET LOCAL lock_timeout = '5s';

COMMIT;
