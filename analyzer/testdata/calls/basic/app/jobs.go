package app

import "database/sql"

func prepare(db *sql.DB) error {
	if _, err := db.Exec("SELECT sneaky()"); err != nil { // want session-set
		return err
	}
	_, err := db.Exec("SELECT harmless($1)", 3)
	return err
}
