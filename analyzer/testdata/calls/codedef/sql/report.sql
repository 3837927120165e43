SELECT app_login('reporting'); -- want session-role
