//! sqlx connection options that become startup parameters.
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};

pub async fn pool(url: &str) -> sqlx::Result<sqlx::PgPool> {
    let opts: PgConnectOptions = url.parse()?;
    let opts = opts
        .application_name("billing")
        .options([("search_path", "tenant")]); // want startup-parameter:error
    let more = PgConnectOptions::new().options(vec![
        ("statement_timeout", "5s"), // want startup-parameter:error
        ("DateStyle", "ISO"),
    ]);
    let _ = more;
    PgPoolOptions::new().connect_with(opts).await
}

pub fn not_connect_options(cmd: &mut Command) {
    cmd.options([("search_path", "x")]);
}
