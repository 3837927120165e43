package pgtest

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

func TestMain(m *testing.M) { os.Exit(Main(m)) }

func TestSharedServerLogins(t *testing.T) {
	s := Shared(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	tests := []struct {
		name, url string
		wantErr   bool
	}{
		{"superuser socket", s.SocketURL(SuperUser), false},
		{"md5 right", s.TCPURL(MD5User, MD5Password), false},
		{"md5 wrong", s.TCPURL(MD5User, "nope"), true},
		{"scram right", s.TCPURL(SCRAMUser, SCRAMPassword), false},
		{"scram wrong", s.TCPURL(SCRAMUser, "nope"), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := pgconn.Connect(ctx, tt.url)
			if (err != nil) != tt.wantErr {
				t.Fatalf("connect: err = %v, want error %v", err, tt.wantErr)
			}
			if err == nil {
				c.Close(ctx)
			}
		})
	}
	if err := s.Exec(ctx, "SELECT 1"); err != nil {
		t.Fatal(err)
	}
	var fsync string
	c, err := pgconn.Connect(ctx, s.SocketURL(SuperUser))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	res, err := c.Exec(ctx, "SHOW fsync").ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	fsync = string(res[0].Rows[0][0])
	if fsync != "off" {
		t.Errorf("fsync = %q, want off", fsync)
	}
}

func TestRestart(t *testing.T) {
	s := New(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	s.Halt()
	if err := s.Exec(ctx, "SELECT 1"); err == nil {
		t.Fatal("query succeeded on a halted server")
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	if err := s.Exec(ctx, "SELECT 1"); err != nil {
		t.Fatal(err)
	}
}
