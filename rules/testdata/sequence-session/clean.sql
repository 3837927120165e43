-- The value comes back with RETURNING, or nextval() runs in the same
-- transaction or statement.
INSERT INTO orders (customer_id) VALUES (1) RETURNING id;
SELECT nextval('orders_id_seq');
SELECT setval('orders_id_seq', 1000, false);
SELECT pg_catalog.setval('public.orders_id_seq', 42, true);
SELECT nextval('orders_id_seq'), currval('orders_id_seq');
SELECT last_value FROM orders_id_seq;
SELECT * FROM pg_sequences WHERE sequencename = 'orders_id_seq';

BEGIN;
SELECT nextval('orders_id_seq');
SELECT currval('orders_id_seq');
SELECT lastval();
COMMIT;

BEGIN;
INSERT INTO orders (customer_id) VALUES (2);
INSERT INTO order_items (order_id, sku) VALUES (currval('orders_id_seq'), 'B-2');
SELECT lastval();
COMMIT;

BEGIN;
INSERT INTO orders (customer_id) VALUES (3);
SAVEPOINT s1;
INSERT INTO order_items (order_id) VALUES (currval('orders_id_seq'));
RELEASE SAVEPOINT s1;
COMMIT;

START TRANSACTION;
SELECT setval('orders_id_seq', 10);
SELECT currval('orders_id_seq');
END;

CREATE FUNCTION app.new_order(c bigint) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
  id bigint;
BEGIN
  INSERT INTO orders (customer_id) VALUES (c);
  id := currval('orders_id_seq');
  RETURN id;
END;
$$;

CREATE FUNCTION app.next_two() RETURNS bigint LANGUAGE sql AS $$
  SELECT nextval('orders_id_seq');
  SELECT currval('orders_id_seq');
$$;

-- words only
SELECT 'SELECT currval(''orders_id_seq'')' AS sql_text;
-- SELECT lastval();
CREATE TABLE counters (currval bigint, lastval bigint);
SELECT currval, lastval FROM counters;
SELECT util.currval('orders_id_seq');
EXPLAIN (VERBOSE) SELECT currval('orders_id_seq');

-- Django sqlsequencereset / Rails reset_pk_sequence!
BEGIN;
SELECT setval(pg_get_serial_sequence('"shop_order"','id'), coalesce(max("id"), 1), max("id") IS NOT null) FROM "shop_order";
COMMIT;
SELECT setval('"public"."users_id_seq"', (SELECT MAX("id") FROM "public"."users"), true);
ALTER SEQUENCE orders_id_seq RESTART WITH 1000;
CREATE TABLE invoices (id bigint PRIMARY KEY DEFAULT nextval('invoices_id_seq'));

-- the same sequence, qualified or quoted differently
BEGIN;
SELECT nextval('public.orders_id_seq');
SELECT currval('"orders_id_seq"');
SELECT currval('public."orders_id_seq"'::regclass);
COMMIT;
