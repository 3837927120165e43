-- target: rds-proxy
LOAD 'auto_explain'; -- want session-load:warning
