CREATE FUNCTION wrap() RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    PERFORM sneaky(); -- want session-set
END
$$;

CREATE PROCEDURE deep() LANGUAGE sql AS $$
    SELECT wrap(); -- want session-set
$$;

CREATE FUNCTION deeper() RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    CALL deep(); -- want session-set
END
$$;

-- ping and pong call each other; only sneaky has an effect.
CREATE FUNCTION ping(n int) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pong(n); -- want session-set
END
$$;

CREATE FUNCTION pong(n int) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    IF n > 0 THEN
        PERFORM ping(n - 1); -- want session-set
    END IF;
    PERFORM sneaky(); -- want session-set
END
$$;

DO $$
BEGIN
    PERFORM rec(3); -- want listen
END
$$;
