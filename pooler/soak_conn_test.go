package pooler

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/pgpoolcheck/pgpoolcheck/internal/pgtest"
)

type soakPgx struct{ c *pgx.Conn }

func (p soakPgx) query(ctx context.Context, sql string, args ...any) ([][]string, string, error) {
	rows, err := p.c.Query(ctx, sql, args...)
	if err != nil {
		return nil, "", err
	}
	var out [][]string
	for rows.Next() {
		vals, err := rows.Values()
		if err != nil {
			rows.Close()
			return out, "", err
		}
		row := make([]string, len(vals))
		for i, v := range vals {
			if v != nil {
				row[i] = fmt.Sprint(v)
			}
		}
		out = append(out, row)
	}
	rows.Close()
	return out, rows.CommandTag().String(), rows.Err()
}

func (p soakPgx) txStatus() byte { return p.c.PgConn().TxStatus() }

func (p soakPgx) net() net.Conn { return p.c.PgConn().Conn() }

func (p soakPgx) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	p.c.Close(ctx)
}

type soakRawConn struct {
	c      *soakClient
	nc     net.Conn
	fe     *pgproto3.Frontend
	status byte
	stmts  map[string]string // SQL → statement name
	nstmt  int
	closed bool
	fixed  bool // simple protocol only, no rng (the query runs on another goroutine)
}

type soakRawStmt struct {
	sql  string
	args []any
	sync bool
}

func soakRawConnect(ctx context.Context, c *soakClient) (*soakRawConn, error) {
	var d net.Dialer
	nc, err := d.DialContext(ctx, "tcp", fmt.Sprintf("127.0.0.1:%d", c.r.tp.port))
	if err != nil {
		return nil, err
	}
	rc := &soakRawConn{c: c, nc: nc, fe: pgproto3.NewFrontend(nc, nc), stmts: map[string]string{}}
	if dl, ok := ctx.Deadline(); ok {
		nc.SetDeadline(dl)
	}
	rc.fe.Send(&pgproto3.StartupMessage{ProtocolVersion: pgproto3.ProtocolVersion30,
		Parameters: map[string]string{"user": pgtest.SuperUser, "database": pgtest.Database, "application_name": c.name}})
	if err := rc.fe.Flush(); err != nil {
		nc.Close()
		return nil, err
	}
	for {
		msg, err := rc.fe.Receive()
		if err != nil {
			nc.Close()
			return nil, rc.wrap(err)
		}
		switch m := msg.(type) {
		case *pgproto3.ErrorResponse:
			nc.Close()
			return nil, &pgconn.PgError{Severity: m.Severity, Code: m.Code, Message: m.Message}
		case *pgproto3.ReadyForQuery:
			rc.status = m.TxStatus
			return rc, nil
		}
	}
}

func (rc *soakRawConn) wrap(err error) error {
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return fmt.Errorf("%w: %v", errSoakTimeout, err)
	}
	return err
}

func (rc *soakRawConn) txStatus() byte { return rc.status }

func (rc *soakRawConn) net() net.Conn { return rc.nc }

func (rc *soakRawConn) close() {
	if rc.closed {
		return
	}
	rc.closed = true
	rc.nc.SetDeadline(time.Now().Add(time.Second))
	rc.fe.Send(&pgproto3.Terminate{})
	rc.fe.Flush()
	rc.nc.Close()
}

func (rc *soakRawConn) query(ctx context.Context, sql string, args ...any) ([][]string, string, error) {
	res, tag, err := rc.run(ctx, []soakRawStmt{{sql: sql, args: args, sync: true}})
	var rows [][]string
	if len(res) > 0 {
		rows = res[0]
	}
	return rows, tag, err
}

func (rc *soakRawConn) pipeline(ctx context.Context, stmts []soakRawStmt) ([][][]string, error) {
	res, _, err := rc.run(ctx, stmts)
	return res, err
}

// run sends stmts (the simple protocol for a lone statement without
// arguments, half the time; else Parse/Bind/Describe/Execute with an
// unnamed or a cached named statement) and reads the answers up to the
// last ReadyForQuery. It returns the rows of each statement that
// completed, the last command tag and the first error.
func (rc *soakRawConn) run(ctx context.Context, stmts []soakRawStmt) ([][][]string, string, error) {
	if dl, ok := ctx.Deadline(); ok {
		rc.nc.SetDeadline(dl)
	}
	rng := rc.c.rng
	syncs := 0
	var made []string
	if len(stmts) == 1 && len(stmts[0].args) == 0 && (rc.fixed || rng.IntN(2) == 0) {
		rc.fe.Send(&pgproto3.Query{String: stmts[0].sql})
		syncs = 1
	} else {
		for _, s := range stmts {
			name := ""
			if rng.IntN(2) == 0 {
				if n, ok := rc.stmts[s.sql]; ok {
					name = n
				} else {
					rc.nstmt++
					name = fmt.Sprintf("soak_raw_%d", rc.nstmt)
					rc.stmts[s.sql] = name
					made = append(made, s.sql)
					rc.fe.Send(&pgproto3.Parse{Name: name, Query: s.sql})
				}
			} else {
				rc.fe.Send(&pgproto3.Parse{Query: s.sql})
			}
			var params [][]byte
			for _, a := range s.args {
				params = append(params, []byte(fmt.Sprint(a)))
			}
			rc.fe.Send(&pgproto3.Bind{PreparedStatement: name, Parameters: params})
			rc.fe.Send(&pgproto3.Describe{ObjectType: 'P'})
			rc.fe.Send(&pgproto3.Execute{})
			if s.sync {
				rc.fe.Send(&pgproto3.Sync{})
				syncs++
			}
		}
	}
	if err := rc.fe.Flush(); err != nil {
		return nil, "", rc.wrap(err)
	}
	var res [][][]string
	var cur [][]string
	var tag string
	var first error
	for syncs > 0 {
		msg, err := rc.fe.Receive()
		if err != nil {
			return res, tag, rc.wrap(err)
		}
		switch m := msg.(type) {
		case *pgproto3.DataRow:
			row := make([]string, len(m.Values))
			for i, v := range m.Values {
				row[i] = string(v)
			}
			cur = append(cur, row)
		case *pgproto3.CopyData:
			cur = append(cur, []string{strings.TrimSuffix(string(m.Data), "\n")})
		case *pgproto3.CommandComplete:
			tag = string(m.CommandTag)
			res = append(res, cur)
			cur = nil
		case *pgproto3.EmptyQueryResponse:
			res = append(res, nil)
		case *pgproto3.ErrorResponse:
			if first == nil {
				first = &pgconn.PgError{Severity: m.Severity, Code: m.Code, Message: m.Message}
			}
			if m.Severity == "FATAL" {
				return res, tag, first
			}
		case *pgproto3.NotificationResponse:
			rc.c.addNote(m.Channel, m.Payload)
		case *pgproto3.ReadyForQuery:
			rc.status = m.TxStatus
			syncs--
		case *pgproto3.CopyInResponse:
			rc.fe.Send(&pgproto3.CopyFail{Message: "soak: no COPY FROM on raw clients"})
			rc.fe.Flush()
		}
	}
	if first != nil {
		// The Parse of a new named statement may have failed: forget it
		// (an orphan on the server is harmless, the names are unique).
		for _, sql := range made {
			delete(rc.stmts, sql)
		}
	}
	return res, tag, first
}
