package queue

import (
	"context"
	"fmt"
	"log"
)

// Worker claims jobs with session advisory locks and listens for new ones.
func (w *Worker) Run(ctx context.Context) error {
	if _, err := w.db.Exec(ctx, "LISTEN job_created"); err != nil { // want listen
		return fmt.Errorf("could not LISTEN on job_created: %w", err)
	}
	var ok bool
	err := w.db.QueryRow(ctx,
		`SELECT pg_try_advisory_lock($1)`, w.id).Scan(&ok) // want advisory-lock-session
	if err != nil {
		log.Printf("LISTEN failed; SET timeout to retry")
	}
	// pgpoolcheck:ignore session-set the migrator connects directly, not through the pooler
	w.db.Exec(ctx, "SET lock_timeout = '5s'")
	w.db.Exec(ctx, "SET LOCAL statement_timeout = '1s'")
	w.db.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", w.id)
	q := "UPDATE jobs SET state = 'running' " +
		"WHERE id = $1 RETURNING id"
	w.db.Exec(ctx, q, 1)
	w.db.Exec(ctx, "SET application_name = "+name) // want session-set:info
	w.db.Exec(ctx, "SET search_path = "+w.schema)  // want session-set:critical
	return w.db.Exec(ctx, `
		CREATE TEMP TABLE claimed (id bigint)`) // want temp-table
}

// Not SQL: ORM method names, identifiers, prose.
var names = []string{"listen", "set_config", "SET", "set search path later"}

func raw() string {
	return "select\tcurrval('jobs_id_seq')" // want sequence-session
}
