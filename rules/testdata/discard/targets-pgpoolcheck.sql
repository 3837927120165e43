-- target: pgpoolcheck
DISCARD ALL; -- want discard:info
