package extract

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// rustSessionCases are the table of TestSessionCalls and the seeds of
// FuzzRustSessionCalls.
var rustSessionCases = []struct {
	name, src string
	want      []string // API receiver @ method text
}{
	{"listener from connect",
		`use sqlx::postgres::PgListener;
async fn run(url: &str) {
    let mut listener = PgListener::connect(url).await?;
    listener.listen("jobs").await?;
    listener.listen_all(vec!["a", "b"]).await?;
    let n = listener.recv().await?;
}`,
		[]string{"PgListener.listen listener @listen", "PgListener.listen_all listener @listen_all"}},
	{"listener as a parameter and a field",
		`use sqlx::postgres::PgListener;
struct W { listener: PgListener }
impl W { async fn go(&mut self) { self.listener.listen("x").await?; } }
async fn sub(l: &mut sqlx::postgres::PgListener) { l.listen("y").await?; }`,
		[]string{"PgListener.listen listener @listen", "PgListener.listen l @listen"}},
	{"listener chained on the constructor",
		`async fn f(pool: &sqlx::PgPool) { sqlx::postgres::PgListener::connect_with(pool).await?.listen("z").await?; }`,
		[]string{"PgListener.listen PgListener::connect_with(…) @listen"}},
	{"listener made but listened elsewhere: the constructor",
		`use sqlx::postgres::PgListener;
async fn f(pool: &PgPool) -> PgListener { let l = PgListener::connect_with(pool).await.unwrap(); subscribe(l) }`,
		[]string{"PgListener.connect_with PgListener @connect_with"}},
	{"advisory lock behind an Arc",
		`use sqlx::postgres::PgAdvisoryLock;
async fn f(pool: &PgPool) {
    let lock1 = Arc::new(PgAdvisoryLock::new("a"));
    let g = lock1.acquire(pool.acquire().await?).await?;
    let c = lock1.clone();
}`,
		[]string{"PgAdvisoryLock.acquire lock1 @acquire"}},
	{"advisory lock",
		`use sqlx::postgres::{PgAdvisoryLock, PgAdvisoryLockKey};
async fn f(conn: &mut PgConnection) {
    let lock = PgAdvisoryLock::new("reindex");
    let guard = lock.acquire(conn).await?;
    guard.release_now().await?;
    let other = PgAdvisoryLock::with_key(PgAdvisoryLockKey::BigInt(7));
    match other.try_acquire(conn).await? { _ => {} }
    PgAdvisoryLock::new("x").acquire(conn).await?;
}`,
		[]string{"PgAdvisoryLock.acquire lock @acquire", "PgAdvisoryLock.try_acquire other @try_acquire", "PgAdvisoryLock.acquire PgAdvisoryLock::new(…) @acquire"}},
	{"migrate macro run",
		`async fn m(pool: &sqlx::PgPool) { sqlx::migrate!("./migrations").run(pool).await?; }`,
		[]string{"Migrator.run sqlx::migrate!() @run"}},
	{"static migrator",
		`use sqlx::migrate::Migrator;
static MIGRATOR: Migrator = sqlx::migrate!();
async fn m(pool: &PgPool) { MIGRATOR.run(pool).await?; }`,
		[]string{"Migrator.run MIGRATOR @run"}},
	{"migrator from new",
		`use sqlx::migrate::Migrator;
async fn m(pool: &PgPool) { let m = Migrator::new(std::path::Path::new("./m")).await?; m.run(pool).await?; }`,
		[]string{"Migrator.run m @run"}},
	{"locking off on the variable",
		`use sqlx::migrate::Migrator;
async fn m(pool: &PgPool) { let mut m = sqlx::migrate!(); m.set_locking(false); m.run(pool).await?; }`,
		nil},
	{"locking off in the chain",
		`async fn m(pool: &sqlx::PgPool) { sqlx::migrate!().set_locking(false).run(pool).await?; }`,
		nil},
	{"locking on in the chain",
		`async fn m(pool: &sqlx::PgPool) { sqlx::migrate!().set_locking(true).run(pool).await?; }`,
		[]string{"Migrator.run sqlx::migrate!() @run"}},
	{"not sqlx",
		`use tokio::sync::Semaphore;
async fn f(lock: &Semaphore) { let p = lock.acquire().await; listener.listen("x"); migrator.run(); }`,
		nil},
	{"names in strings and comments",
		`// let l = PgListener::connect(url); l.listen("x")
fn f() { let s = "PgAdvisoryLock::new(\"a\").acquire(c)"; let _ = sqlx::query(s); }`,
		nil},
	{"a different type's variable of the same method",
		`use sqlx::postgres::PgListener;
async fn f(sem: &Semaphore, l: &mut PgListener) { sem.acquire().await; l.recv().await; }`,
		nil},
}

func TestSessionCalls(t *testing.T) {
	for _, tt := range rustSessionCases {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			src := []byte(tt.src)
			for _, c := range SessionCalls(Rust, src) {
				got = append(got, fmt.Sprintf("%s %s @%s", c.API, c.Receiver, src[c.Start:c.End]))
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("got  %q\nwant %q", got, tt.want)
			}
		})
	}
	if got := SessionCalls(Go, []byte(`sqlx PgListener l.listen("x")`)); got != nil {
		t.Errorf("Go: %v", got)
	}
}

// FuzzRustSessionCalls checks that SessionCalls never panics and that every
// call it returns points at the method it names.
func FuzzRustSessionCalls(f *testing.F) {
	for _, c := range rustSessionCases {
		f.Add([]byte(c.src))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		for _, c := range SessionCalls(Rust, src) {
			if c.Start < 0 || c.End > len(src) || c.Start >= c.End {
				t.Fatalf("bad range %d..%d of %d bytes", c.Start, c.End, len(src))
			}
			if _, method, _ := strings.Cut(c.API, "."); string(src[c.Start:c.End]) != method {
				t.Fatalf("%s points at %q", c.API, src[c.Start:c.End])
			}
		}
	})
}
