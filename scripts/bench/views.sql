\set aid random(1, 100000 * :scale)
SELECT abalance FROM bench_accounts WHERE aid = :aid;
SELECT bonus FROM bench_bonus_v WHERE aid = :aid;
