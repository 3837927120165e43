package store

import (
	"context"
	"fmt"
)

// Names formatted into statements with printf verbs.
func (s *Store) Subscribe(ctx context.Context, channel string) error {
	_, err := s.db.Exec(ctx, fmt.Sprintf("LISTEN %s", quoteIdent(channel))) // want listen
	return err
}

func (s *Store) Scratch(ctx context.Context, name string) error {
	_, err := s.db.Exec(ctx, fmt.Sprintf("CREATE TEMP TABLE scratch_%v (n int)", name)) // want temp-table
	return err
}

func (s *Store) Become(ctx context.Context, role string) error {
	_, err := s.db.Exec(ctx, fmt.Sprintf("SET ROLE %q", role)) // want session-role:critical
	return err
}
