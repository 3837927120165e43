package analyzer

import (
	"fmt"
	"strings"
	"testing"
)

// codeTree generates an application source tree in memory: Go, Python,
// Ruby and JavaScript files with SQL in strings among ordinary code, log
// messages and comments, about size bytes in all.
func codeTree(size int) []Input {
	var files []Input
	total := 0
	for i := 0; total < size; i++ {
		var b strings.Builder
		var name string
		switch i % 4 {
		case 0:
			name = fmt.Sprintf("svc/repo%d.go", i)
			fmt.Fprintf(&b, "package svc\n\n// Repo%[1]d stores orders.\ntype Repo%[1]d struct{ db DB }\n\n", i)
			for j := 0; j < 20; j++ {
				fmt.Fprintf(&b, "func (r *Repo%d) Get%d(ctx context.Context, id int64) (*Order, error) {\n\tlog.Printf(\"loading order %%d\", id)\n\trow := r.db.QueryRow(ctx, `SELECT id, status, total\n\t\tFROM orders WHERE id = $1 AND tenant = $2`, id, tenant(ctx))\n\tvar o Order\n\tif err := row.Scan(&o.ID, &o.Status, &o.Total); err != nil {\n\t\treturn nil, fmt.Errorf(\"order %%d: %%w\", id, err)\n\t}\n\treturn &o, nil\n}\n\n", i, j)
			}
			fmt.Fprintf(&b, "func (r *Repo%d) Lock(ctx context.Context) { r.db.Exec(ctx, \"SELECT pg_advisory_lock(42)\") }\n", i)
		case 1:
			name = fmt.Sprintf("app/jobs%d.py", i)
			b.WriteString("import logging\n\nlog = logging.getLogger(__name__)\n\n")
			for j := 0; j < 20; j++ {
				fmt.Fprintf(&b, "def job_%d(cur, job_id):\n    \"\"\"Run job %d.\"\"\"\n    log.info(\"running %%s\", job_id)\n    cur.execute(\"UPDATE jobs SET state = %%s WHERE id = %%s\", (\"running\", job_id))\n    return {\"id\": job_id, \"state\": \"running\"}\n\n", j, j)
			}
			b.WriteString("def tenant(cur, t):\n    cur.execute(\"SELECT set_config('app.tenant', %s, false)\", (t,))\n")
		case 2:
			name = fmt.Sprintf("app/models/order%d.rb", i)
			fmt.Fprintf(&b, "class Order%d < ApplicationRecord\n", i)
			for j := 0; j < 20; j++ {
				fmt.Fprintf(&b, "  def self.find_%d(id)\n    Rails.logger.info \"finding #{id}\"\n    find_by_sql([<<~SQL, id])\n      SELECT * FROM orders\n      WHERE id = ? -- order %d\n    SQL\n  end\n\n", j, j)
			}
			b.WriteString("  def listen!\n    connection.execute(\"LISTEN orders\")\n  end\nend\n")
		default:
			name = fmt.Sprintf("web/api%d.ts", i)
			for j := 0; j < 20; j++ {
				fmt.Fprintf(&b, "export async function list%d(db: Pool, tenant: string) {\n  console.log(`listing for ${tenant}`);\n  const r = await db.query(sql`SELECT id, name FROM items WHERE tenant = ${tenant} LIMIT 50`);\n  return r.rows.map((x) => ({ ...x, n: x.name.replace(/\\s+/g, ' ') }));\n}\n\n", j)
			}
			b.WriteString("export const setPath = (db: Pool) => db.query(\"SET search_path = app\");\n")
		}
		files = append(files, Input{Name: name, Data: []byte(b.String())})
		total += b.Len()
	}
	return files
}

// BenchmarkScanCode scans a generated 4 MiB application tree: literal
// extraction, the SQL-looking filter, parsing and the rules.
func BenchmarkScanCode(b *testing.B) {
	files := codeTree(4 << 20)
	size := 0
	for _, f := range files {
		size += len(f.Data)
	}
	cfg := &Config{Workers: workers()}
	b.SetBytes(int64(size))
	for b.Loop() {
		rep, err := cfg.Scan(files)
		if err != nil {
			b.Fatal(err)
		}
		if want := len(files); rep.Summary.Files != want || len(rep.Findings) < want {
			b.Fatalf("scanned %d files with %d findings, want %d files and at least one finding each", rep.Summary.Files, len(rep.Findings), want)
		}
	}
	b.ReportMetric(float64(len(files))*float64(b.N)/b.Elapsed().Seconds(), "files/s")
}
