//! SQL that diesel's tests run inside test transactions, which are rolled
//! back and never committed, next to the same SQL on a plain connection.
use diesel::prelude::*;

pub fn connection() -> PgConnection {
    let mut conn = PgConnection::establish(&database_url()).unwrap();
    conn.begin_test_transaction().unwrap();
    conn
}

#[test]
fn temp_table_in_a_test_transaction() {
    let conn = &mut PgConnection::establish(&database_url()).unwrap();
    conn.begin_test_transaction().unwrap();
    diesel::sql_query("CREATE TEMPORARY TABLE users(id SERIAL PRIMARY KEY, name TEXT NOT NULL)")
        .execute(conn)
        .unwrap();
    diesel::sql_query("SET search_path TO other, public").execute(conn).unwrap();
    // Not transactional: the lock outlives the rollback.
    diesel::sql_query("SELECT pg_advisory_lock(1)").execute(conn).unwrap(); // want advisory-lock-session:error
}

#[test]
fn temp_table_from_the_helper() {
    let conn = &mut connection();
    diesel::sql_query("CREATE TEMPORARY VIEW v AS SELECT 1 AS one").execute(conn).unwrap();
}

#[test]
fn temp_table_in_test_transaction_closure() {
    let conn = &mut PgConnection::establish(&database_url()).unwrap();
    conn.test_transaction::<_, diesel::result::Error, _>(|conn| {
        diesel::sql_query("CREATE TEMP TABLE t(x int)").execute(conn)?;
        Ok(())
    });
    diesel::sql_query("CREATE TEMP TABLE after_closure(x int)").execute(conn).unwrap(); // want temp-table:error
}

#[test]
fn temp_table_before_the_test_transaction() {
    let conn = &mut PgConnection::establish(&database_url()).unwrap();
    diesel::sql_query("CREATE TEMPORARY TABLE early(id int)").execute(conn).unwrap(); // want temp-table:error
    conn.begin_test_transaction().unwrap();
}
