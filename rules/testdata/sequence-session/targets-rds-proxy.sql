-- target: rds-proxy
SELECT currval('orders_id_seq'); -- want sequence-session:warning
