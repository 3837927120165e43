-- PREPARE TRANSACTION refuses a transaction that ran LISTEN or UNLISTEN:
-- the transaction rolls back and the subscription never takes effect.
BEGIN;
LISTEN tp_events;
PREPARE TRANSACTION 'tp_listen';

BEGIN;
UNLISTEN *;
PREPARE TRANSACTION 'tp_unlisten';

-- COMMIT subscribes the connection
BEGIN;
LISTEN kept_events; -- want listen:error
COMMIT;
