package shop

import (
	"context"
	"database/sql"

	"github.com/jackc/pgx/v5"
)

// currval() and lastval() in the transaction of the INSERT that set them
// are safe behind a transaction pooler; in a later transaction they are not.

func (s *Store) AddParcel(ctx context.Context, dest string) (int64, error) {
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, "INSERT INTO parcels (dest) VALUES ($1)", dest); err != nil {
		return 0, err
	}
	var id int64
	if err := tx.QueryRow(ctx, "SELECT currval('parcels_id_seq')").Scan(&id); err != nil {
		return 0, err
	}
	return id, tx.Commit(ctx)
}

// addLabel runs in the caller's transaction.
func addLabel(ctx context.Context, tx pgx.Tx, text string) (id int64, err error) {
	if _, err = tx.Exec(ctx, "INSERT INTO labels (text) VALUES ($1)", text); err != nil {
		return 0, err
	}
	err = tx.QueryRow(ctx, "SELECT lastval()").Scan(&id)
	return id, err
}

func (s *Store) AddRoute(ctx context.Context, name string) (id int64, err error) {
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "INSERT INTO routes (name) VALUES ($1)", name); err != nil {
			return err
		}
		return tx.QueryRow(ctx, "SELECT lastval()").Scan(&id)
	})
	return id, err
}

func addStop(tx *sql.Tx, name string) (id int64, err error) {
	if _, err = tx.Exec("INSERT INTO stops (name) VALUES ($1)", name); err != nil {
		return 0, err
	}
	err = tx.QueryRow("SELECT currval('stops_id_seq')").Scan(&id)
	return id, err
}

// On the pool, each statement is a transaction of its own, maybe on
// another server connection.
func (s *Store) AddDepot(ctx context.Context, name string) (id int64, err error) {
	if _, err = s.pool.Exec(ctx, "INSERT INTO depots (name) VALUES ($1)", name); err != nil {
		return 0, err
	}
	err = s.pool.QueryRow(ctx, "SELECT lastval()").Scan(&id) // want sequence-session
	return id, err
}

// The pool's statements are not the transaction's, though they sit
// beside them.
func (s *Store) AddHub(ctx context.Context, name string) (id int64, err error) {
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback(ctx)
	if _, err = tx.Exec(ctx, "INSERT INTO hubs (name) VALUES ($1)", name); err != nil {
		return 0, err
	}
	if err = tx.Commit(ctx); err != nil {
		return 0, err
	}
	err = s.pool.QueryRow(ctx, "SELECT currval('hubs_id_seq')").Scan(&id) // want sequence-session
	return id, err
}
