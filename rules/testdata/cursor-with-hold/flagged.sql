-- WITH HOLD cursors survive COMMIT on the server connection.
DECLARE export_cur CURSOR WITH HOLD FOR SELECT * FROM orders; -- want cursor-with-hold:error
DECLARE c2 BINARY CURSOR WITH HOLD FOR SELECT id FROM users; -- want cursor-with-hold:error
DECLARE c3 SCROLL CURSOR WITH HOLD FOR SELECT id FROM users ORDER BY id; -- want cursor-with-hold:error
DECLARE c4 NO SCROLL CURSOR WITH HOLD FOR SELECT 1; -- want cursor-with-hold:error
declare "Paging" cursor with hold for select * from events; -- want cursor-with-hold:error
DECLARE c5 INSENSITIVE CURSOR WITH HOLD FOR SELECT 1; -- want cursor-with-hold:error

-- declared in a transaction, fetched after its COMMIT
BEGIN;
DECLARE big_export CURSOR WITH HOLD FOR SELECT * FROM events ORDER BY id; -- want cursor-with-hold:error
FETCH 1000 FROM big_export;
COMMIT;
FETCH 1000 FROM big_export;
CLOSE big_export;

-- closing a different cursor does not help
BEGIN;
DECLARE a CURSOR WITH HOLD FOR SELECT 1; -- want cursor-with-hold:error
CLOSE b;
COMMIT;

-- closed before it was declared
BEGIN;
CLOSE ALL;
DECLARE late CURSOR WITH HOLD FOR SELECT 1; -- want cursor-with-hold:error
COMMIT;
