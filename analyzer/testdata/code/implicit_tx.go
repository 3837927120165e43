package report

import "context"

// One query string is one implicit transaction.
func Totals(ctx context.Context, db DB) error {
	_, err := db.Exec(ctx, `PREPARE totals AS SELECT sum(amount) FROM ledger;
EXECUTE totals;
DEALLOCATE totals;`)
	db.Exec(ctx, "PREPARE left_over AS SELECT 1; EXECUTE left_over") // want sql-prepare:error
	return err
}
