package pooler

import (
	"context"
	"errors"
	"fmt"
)

// authQuerySettings returns the auth user, query and server database with
// which the users of a client of database are looked up (user "": they
// are not). p.mu is held.
func (p *Proxy) authQuerySettings(database string) (user, query, dbname string) {
	user, query, authDB := p.cfg.AuthUser, p.cfg.AuthQuery, p.cfg.AuthDBName
	entry, admitted := p.database(database)
	if isAdminDatabase(database) {
		admitted = false
	}
	if admitted {
		if entry.AuthUser != "" {
			user = entry.AuthUser
		}
		if entry.AuthQuery != "" {
			query = entry.AuthQuery
		}
		if entry.AuthDBName != "" {
			authDB = entry.AuthDBName
		}
	}
	switch {
	case authDB != "":
		dbname = authDB
		if db, ok := p.database(authDB); ok && db.DBName != "" {
			dbname = db.DBName
		}
	case admitted && entry.DBName != "":
		dbname = entry.DBName
	case admitted:
		dbname = database
	default:
		// The console, or a database the client will be refused: the
		// lookup runs in the upstream URL's database, never in one the
		// client names but may not reach.
		dbname = p.upstream.Database
	}
	return user, query, dbname
}

// authQuery looks up user's secret on the server for a client of
// database: it logs in as the auth user and runs the auth query. found is
// false when the query returns no row or a NULL name; a NULL secret is
// returned as "", which no password matches.
func (p *Proxy) authQuery(database, user string) (secret string, found bool, err error) {
	authUser, query, dbname := p.authQuerySettings(database)
	password := ""
	if authUser != "" {
		password = p.serverPassword(authUser)
	}
	if authUser == "" {
		return "", false, nil
	}
	cfg := p.upstream.Copy()
	cfg.User, cfg.Database, cfg.Password = authUser, dbname, password
	cfg.ConnectTimeout = p.live.connect()
	ctx, cancel := context.WithTimeout(p.ctx, p.live.connect())
	defer cancel()
	pc, err := connectServer(ctx, cfg, p.auth)
	if err != nil {
		return "", false, fmt.Errorf("auth user %s: %w", authUser, err)
	}
	defer pc.Close(context.Background())
	res := pc.ExecParams(ctx, query, [][]byte{[]byte(user)}, nil, nil, nil).Read()
	if res.Err != nil {
		return "", false, fmt.Errorf("auth query: %w", res.Err)
	}
	if len(res.Rows) == 0 {
		return "", false, nil
	}
	row := res.Rows[0]
	if len(row) != 2 {
		return "", false, errors.New("auth query: want two columns, the user name and its secret")
	}
	if row[0] == nil {
		return "", false, nil
	}
	return string(row[1]), true, nil
}
