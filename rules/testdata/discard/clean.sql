-- Look-alikes of DISCARD.
SELECT 'DISCARD ALL' AS server_reset_query;
-- DISCARD ALL;
CREATE TABLE discards (discard boolean, reason text);
SELECT discard FROM discards;
UPDATE items SET discarded_at = now() WHERE id = 1;
DELETE FROM cache;
