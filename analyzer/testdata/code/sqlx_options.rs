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

#[cfg(test)]
mod tests {
    use super::*;

    // Parsed and compared, never sent: no finding.
    #[test]
    fn options_format() {
        let o = PgConnectOptions::new().options([("search_path", "x")]);
        assert_eq!(o.get_options(), Some("-c search_path=x"));
        let u: PgConnectOptions = "postgres:///?options=-c%20search_path%3Dy".parse().unwrap();
        assert!(u.get_options().is_some());
    }

    #[tokio::test]
    async fn connects() {
        let o = PgConnectOptions::new().options([("lock_timeout", "1s")]); // want startup-parameter:error
        PgPoolOptions::new().connect_with(o).await.unwrap();
    }
}
