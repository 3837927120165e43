//! sqlx tests whose transaction is dropped without a commit: sqlx rolls
//! it back.
#[sqlx::test]
async fn tenant_schema(pool: PgPool) -> sqlx::Result<()> {
    let mut tx = pool.begin().await?;
    sqlx::query("SET search_path TO tenant_a, public").execute(&mut *tx).await?;
    sqlx::query("CREATE TEMP TABLE scratch (id int)").execute(&mut *tx).await?;
    Ok(())
}

async fn migrate(pool: &PgPool) -> sqlx::Result<()> {
    let mut tx = pool.begin().await?;
    sqlx::query("SET search_path TO app").execute(&mut *tx).await?; // want session-set:critical
    tx.commit().await
}
