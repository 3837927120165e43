//! Job store; it's "shared" by the workers.
use deadpool_postgres::Pool;
use sea_orm::{ConnectionTrait, DbBackend, Statement};
use sqlx::PgPool;

/* A block comment /* with a nested "SET ROLE admin" */ still 'commented' */

pub struct JobStore<'a> {
    pool: &'a PgPool,
    schema: &'a str,
}

impl<'a> JobStore<'a> {
    pub async fn claim(&self, id: i64, tenant: &'a str) -> anyhow::Result<()> {
        let quote = '"';
        let apostrophe = '\'';
        sqlx::query(&format!("SET search_path TO {}, public", self.schema)) // want session-set:critical
            .execute(self.pool)
            .await?;
        sqlx::query("SELECT pg_advisory_lock($1)").bind(id).execute(self.pool).await?; // want advisory-lock-session
        let job: (i64,) = sqlx::query_as("SELECT id FROM jobs WHERE id = $1 AND tenant = $2")
            .bind(id)
            .bind(tenant)
            .fetch_one(self.pool)
            .await?;
        let n: i64 = sqlx::query_scalar("SELECT lastval()").fetch_one(self.pool).await?; // want sequence-session
        sqlx::query!("LISTEN jobs").execute(self.pool).await?; // want listen
        sqlx::query_as!(Job, r#"SELECT id AS "id!" FROM jobs WHERE state = 'new'"#)
            .fetch_all(self.pool)
            .await?;
        sqlx::raw_sql(r#"
            CREATE TEMP TABLE batch AS -- want temp-table
            SELECT * FROM jobs
        "#)
        .execute(self.pool)
        .await?;
        // pgpoolcheck:ignore listen this worker connects to the server directly
        sqlx::raw_sql("LISTEN direct").execute(self.pool).await?;
        sqlx::raw_sql("UNLISTEN direct").execute(self.pool).await?; // pgpoolcheck:ignore listen connects to the server directly
        println!("LISTEN on {}", tenant);
        eprintln!("SET ROLE skipped for {tenant}");
        print!("DISCARD ALL");
        log::info!("LISTEN jobs started");
        log::warn!(target: "db", "SET timeout failed: {}", id);
        tracing::error!(%id, tenant, "LISTEN failed");
        tracing::debug!(job = ?job, "UNLISTEN {}", n);
        tracing::trace!("DISCARD ALL");
        let row = self.fetch().await.expect("LISTEN failed");
        if row == 0 {
            panic!("SET ROLE failed for {}", id);
        }
        anyhow::bail!("LISTEN failed");
    }

    pub async fn tokio(&self, pool: &Pool, id: i64) -> Result<(), Error> {
        let client = pool.get().await?;
        client.batch_execute("SET statement_timeout = '5s'").await?; // want session-set
        client.execute("SELECT pg_advisory_lock($1)", &[&id]).await?; // want advisory-lock-session
        let rows = client.query("SELECT * FROM jobs WHERE id = $1", &[&id]).await?;
        let stmt = client.prepare("PREPARE claim AS SELECT 1").await?; // want sql-prepare
        client.simple_query("LOAD 'auto_explain'").await?; // want session-load
        client
            .batch_execute(concat!(
                "DECLARE c CURSOR WITH HOLD ", // want cursor-with-hold
                "FOR SELECT 1",
            ))
            .await?;
        let q = format!("UPDATE jobs SET state = '{}', data = '{{}}' WHERE id = $1", "done");
        client.execute(q.as_str(), &[&id]).await?;
        let mut sql = String::from("UPDATE jobs");
        sql += " SET state = 'done'";
        Ok(())
    }

    pub fn diesel(conn: &mut PgConnection) -> QueryResult<usize> {
        diesel::sql_query("SET LOCAL lock_timeout = '1s'").execute(conn)?;
        diesel::sql_query("SET lock_timeout = '1s'").execute(conn) // want session-set
    }

    pub async fn sea_orm(db: &DatabaseConnection, name: &str) -> Result<(), DbErr> {
        db.execute(Statement::from_string(
            DbBackend::Postgres,
            format!("SET application_name = '{name}'"), // want session-set
        ))
        .await?;
        db.execute(Statement::from_sql_and_values(
            DbBackend::Postgres,
            "SELECT pg_try_advisory_lock($1)", // want advisory-lock-session
            [1.into()],
        ))
        .await?;
        Ok(())
    }
}

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("LISTEN failed: {0}")]
    Listen(String),
}
