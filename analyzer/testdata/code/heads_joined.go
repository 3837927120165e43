package tenant

import "strings"

// SQL heads that code completes with values.
func Enter(ctx context.Context, db DB, schema, table string) {
	db.Exec(ctx, "SET search_path TO "+schema) // want session-set:critical
	var b strings.Builder
	b.WriteString("CREATE TEMPORARY TABLE ") // want temp-table:error
	b.WriteString(table)
	b.WriteString(" (LIKE events)")
	db.Exec(ctx, b.String())
	db.Exec(ctx, "SET LOCAL search_path TO "+schema)
}
