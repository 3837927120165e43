package db

// Routines created by the application's own migrations.
const createHelpers = `
CREATE OR REPLACE FUNCTION app_login(u text) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE format('SET ROLE %I', u); -- want session-role
END
$$;
`
