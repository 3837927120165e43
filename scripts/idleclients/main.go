// Command idleclients opens many idle client connections to a PostgreSQL
// server or pooler and holds them, for measuring the memory a pooler
// spends per idle client. It prints "ready N" once every connection has
// logged in and answered a query, then waits for SIGINT or SIGTERM.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

func main() {
	n := flag.Int("n", 10000, "number of connections")
	url := flag.String("url", "", "connection URL")
	par := flag.Int("parallel", 50, "logins at once")
	flag.Parse()
	if *url == "" {
		fmt.Fprintln(os.Stderr, "idleclients: -url is required")
		os.Exit(2)
	}
	ctx := context.Background()
	conns := make([]*pgconn.PgConn, *n)
	sem := make(chan struct{}, *par)
	var wg sync.WaitGroup
	var mu sync.Mutex
	failed := 0
	var firstErr error
	for i := range conns {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			cctx, cancel := context.WithTimeout(ctx, 60*time.Second)
			defer cancel()
			c, err := pgconn.Connect(cctx, *url)
			if err == nil {
				_, err = c.Exec(cctx, "SELECT 1").ReadAll()
			}
			if err != nil {
				mu.Lock()
				failed++
				if firstErr == nil {
					firstErr = err
				}
				mu.Unlock()
				return
			}
			conns[i] = c
		}()
	}
	wg.Wait()
	if failed > 0 {
		fmt.Fprintf(os.Stderr, "idleclients: %d of %d connections failed, first: %v\n", failed, *n, firstErr)
	}
	fmt.Printf("ready %d\n", *n-failed)
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	<-sig
	for _, c := range conns {
		if c != nil {
			c.Close(ctx)
		}
	}
}
