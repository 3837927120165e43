// Command pgpoolcheck finds what breaks when PostgreSQL clients move behind
// a transaction-mode connection pooler. See README.md.
package main

import (
	"context"
	"os"

	"github.com/pgpoolcheck/pgpoolcheck/internal/cli"
)

func main() { os.Exit(cli.Run(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) }
