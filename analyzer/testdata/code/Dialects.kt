package app

fun lastIdQuery(db: Db, alias: String): String = when (db) {
    Db.MARIADB -> "SELECT LASTVAL(${db.sequence}) AS $alias"
    Db.POSTGRESQL -> "SELECT lastval() AS $alias" // want sequence-session
    else -> "SELECT LAST_INSERT_ID() AS $alias"
}

// An Oracle block: its BEGIN and END are not a transaction around the
// statements above.
val oracleBlock = """
    DECLARE
        rc sys_refcursor;
    BEGIN
        EXECUTE IMMEDIATE 'INSERT INTO t VALUES (nextval)';
    END;
"""
