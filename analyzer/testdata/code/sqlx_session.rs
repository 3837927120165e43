//! Driver APIs of sqlx that keep session state on the server connection.
use sqlx::migrate::Migrator;
use sqlx::postgres::{PgAdvisoryLock, PgListener, PgPool};

static MIGRATOR: Migrator = sqlx::migrate!("./migrations");

pub struct Worker {
    listener: PgListener,
}

impl Worker {
    pub async fn start(pool: &PgPool) -> sqlx::Result<Worker> {
        let mut listener = PgListener::connect_with(pool).await?;
        listener.listen("jobs").await?; // want listen:error
        listener.listen_all(["a", "b"]).await?; // want listen:error
        Ok(Worker { listener })
    }

    pub async fn resubscribe(&mut self) -> sqlx::Result<()> {
        self.listener.listen("jobs").await // want listen:error
    }

    pub async fn exclusive(pool: &PgPool) -> sqlx::Result<()> {
        let mut conn = pool.acquire().await?;
        let lock = PgAdvisoryLock::new("reindex");
        let guard = lock.acquire(&mut conn).await?; // want advisory-lock-session:error
        sqlx::query("REINDEX TABLE jobs").execute(guard.as_mut()).await?;
        guard.release_now().await?;
        Ok(())
    }
}

pub async fn migrate(pool: &PgPool) -> Result<(), sqlx::migrate::MigrateError> {
    MIGRATOR.run(pool).await?; // want advisory-lock-session:warning
    sqlx::migrate!().run(pool).await?; // want advisory-lock-session:warning
    sqlx::migrate!().set_locking(false).run(pool).await?;
    Ok(())
}

pub async fn not_sqlx(sem: &tokio::sync::Semaphore, pool: &PgPool) {
    let _permit = sem.acquire().await; // a semaphore, not a lock on the server
    let _conn = pool.acquire().await; // a pool connection
    log::info!("PgListener::connect(url).listen(\"x\")");
}
