-- DISCARD cleans whichever server connection it lands on.
DISCARD ALL; -- want discard:info
DISCARD PLANS; -- want discard:info
DISCARD SEQUENCES; -- want discard:info
DISCARD TEMP; -- want discard:info
DISCARD TEMPORARY; -- want discard:info
discard all; -- want discard:info
BEGIN;
DISCARD TEMP; -- want discard:info
COMMIT;
