SELECT wrap(); -- want session-set
CALL deep(); -- want session-set
-- deeper, deep, wrap, sneaky: four routines deep, beyond the three followed.
SELECT deeper();
SELECT ping(2); -- want session-set
SELECT rec(1); -- want listen
