package analyzer

import (
	"testing"

	"github.com/pgpoolcheck/pgpoolcheck/internal/extract"
)

// FuzzPHPSettings checks that the PHP driver and Laravel checks never
// panic and that every finding lies inside the file.
func FuzzPHPSettings(f *testing.F) {
	for _, s := range []string{
		`<?php pg_prepare($c, "n", 'SELECT 1'); pg_send_prepare($c, $n, 'x');`,
		`<?php new PDO('pgsql:host=x', 'u', 'p', [PDO::ATTR_EMULATE_PREPARES => false]);`,
		`<?php return ['c' => ['pgsql' => ['driver' => 'pgsql', 'search_path' => env('S', 'public'), 'schema' => 'x']]];`,
		`<?php pg_prepare(`, `<?php ['driver' => 'pgsql', 'timezone' => env(`, `<?php PDO::ATTR_EMULATE_PREPARES,`,
	} {
		f.Add([]byte(s))
	}
	cfg := &Config{}
	f.Fuzz(func(t *testing.T, src []byte) {
		res, err := cfg.AnalyzeCode("config/database.php", src, extract.PHP)
		if err != nil {
			return
		}
		lines := len(splitLines(src))
		for _, fd := range res.Findings {
			if fd.Line < 1 || fd.Line > lines+1 {
				t.Fatalf("finding at line %d of %d: %+v", fd.Line, lines, fd)
			}
		}
	})
}

func splitLines(b []byte) []int {
	var out []int
	for i, c := range b {
		if c == '\n' {
			out = append(out, i)
		}
	}
	return append(out, len(b))
}
