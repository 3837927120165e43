-- currval()/lastval() in a transaction of their own.
SELECT currval('orders_id_seq'); -- want sequence-session:error
SELECT currval('public.orders_id_seq'::regclass); -- want sequence-session:error
SELECT pg_catalog.currval('orders_id_seq'); -- want sequence-session:error
SELECT lastval(); -- want sequence-session:error
SELECT LASTVAL(); -- want sequence-session:error
SELECT currval(pg_get_serial_sequence('orders', 'id')); -- want sequence-session:error

-- the classic pattern: INSERT, then ask for the id in the next statement
INSERT INTO orders (customer_id) VALUES (1);
SELECT currval('orders_id_seq'); -- want sequence-session:error
INSERT INTO order_items (order_id, sku) VALUES (currval('orders_id_seq'), 'A-1'); -- want sequence-session:error
INSERT INTO audit (entity_id) SELECT lastval(); -- want sequence-session:error

-- anywhere in a statement
SELECT * FROM orders WHERE id = currval('orders_id_seq'); -- want sequence-session:error
UPDATE orders SET parent_id = lastval() WHERE id = 7; -- want sequence-session:error
WITH last AS (SELECT lastval() AS id) SELECT * FROM last; -- want sequence-session:error

-- nextval of another sequence does not help currval of this one
SELECT nextval('invoices_id_seq'), currval('orders_id_seq'); -- want sequence-session:error

-- nextval in an earlier autocommit statement: another transaction
SELECT nextval('orders_id_seq');
SELECT currval('orders_id_seq'); -- want sequence-session:error

-- nextval after the COMMIT of the transaction
BEGIN;
SELECT nextval('orders_id_seq');
COMMIT;
SELECT currval('orders_id_seq'); -- want sequence-session:error

-- currval before nextval in one transaction
BEGIN;
SELECT currval('orders_id_seq'); -- want sequence-session:error
SELECT nextval('orders_id_seq');
COMMIT;

CREATE FUNCTION app.last_order() RETURNS bigint LANGUAGE sql AS $$
  SELECT currval('orders_id_seq'); -- want sequence-session:error
$$;

CREATE FUNCTION app.last_id() RETURNS bigint LANGUAGE plpgsql AS $$
BEGIN
  RETURN lastval(); -- want sequence-session:error
END;
$$;

-- the same sequence read twice in one statement: one finding
INSERT INTO order_links (left_id, right_id) VALUES (currval('orders_id_seq'), currval('orders_id_seq')); -- want sequence-session:error
INSERT INTO order_links (left_id, right_id)
VALUES (lastval(), lastval()); -- want sequence-session:error
-- two sequences in one statement: one finding each
INSERT INTO order_links (left_id, right_id) VALUES (currval('orders_id_seq'), currval('invoices_id_seq')); -- want sequence-session:error sequence-session:error
