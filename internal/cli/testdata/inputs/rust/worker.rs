use sqlx::postgres::{PgAdvisoryLock, PgListener, PgPool};

pub async fn run(pool: &PgPool) -> anyhow::Result<()> {
    sqlx::migrate!().run(pool).await?;
    let mut listener = PgListener::connect_with(pool).await?;
    listener.listen("jobs").await?;
    let mut conn = pool.acquire().await?;
    let lock = PgAdvisoryLock::new("scheduler");
    let _guard = lock.acquire(&mut conn).await?;
    loop {
        let note = listener.recv().await?;
        sqlx::query("UPDATE jobs SET state = 'seen' WHERE id = $1::bigint")
            .bind(note.payload())
            .execute(pool)
            .await?;
    }
}
