package main

import "database/sql"

func setup(db *sql.DB) error {
	_, err := db.Exec("CALL sneaky()")
	return err
}
