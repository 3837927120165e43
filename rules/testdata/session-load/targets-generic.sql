-- target: generic
LOAD 'auto_explain'; -- want session-load:warning
