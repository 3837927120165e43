package store

import (
	"context"
	"database/sql"
	"testing"

	"github.com/jackc/pgx/v5"
)

// withSchema is a test helper: its transaction is rolled back when the
// test ends and never committed, so the SET and the temporary table
// leave nothing on the server connection.
func withSchema(t *testing.T, conn *pgx.Conn, schema string) pgx.Tx {
	ctx := context.Background()
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tx.Rollback(ctx) })
	tx.Exec(ctx, "SET search_path TO tenant_a, public")
	tx.Exec(ctx, "CREATE TEMP TABLE scratch (id int)")
	tx.Exec(ctx, "LISTEN test_events")
	// Not transactional: the lock outlives the rollback.
	tx.Exec(ctx, "SELECT pg_advisory_lock(7)") // want advisory-lock-session:error
	return tx
}

func TestDeferredRollback(t *testing.T) {
	db := openDB(t)
	tx, _ := db.BeginTx(context.Background(), nil)
	defer tx.Rollback()
	tx.Exec("SET statement_timeout = '1s'")
	// database/sql runs this on another connection of the pool, outside
	// the transaction: it stays on that connection.
	db.Exec("SET work_mem = '64MB'") // want session-set:error
}

// A transaction that is committed keeps its SET on the connection.
func migrate(ctx context.Context, db *sql.DB) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	tx.ExecContext(ctx, "SET search_path TO app") // want session-set:critical
	return tx.Commit()
}
