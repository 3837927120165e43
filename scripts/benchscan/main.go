// Command benchscan is the helper of scripts/bench-scan.sh, not part of
// pgpoolcheck. It has two subcommands:
//
//	benchscan gen -out DIR -files N -bytes TOTAL
//
// writes a synthetic source tree of N files and about TOTAL bytes into DIR,
// built from the repository's own samples (testdata/sample and
// rules/testdata SQL, analyzer/testdata/code application code); the tree
// depends only on N and TOTAL, never on a random seed or the clock. Three
// files in five are SQL (several samples one after the other), two in five
// application code (one sample repeated); sizes vary from a quarter to
// 1.75 times the mean. It prints the number of files and bytes written.
//
//	benchscan run [-o FILE] -- COMMAND [ARG...]
//
// runs a command with its standard output sent to FILE (default: discarded)
// and prints its wall
// time in seconds and its peak resident set size in kilobytes (getrusage),
// for machines without /usr/bin/time.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: benchscan gen -out DIR -files N -bytes TOTAL | benchscan run [-o FILE] -- COMMAND...")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "gen":
		err = gen(os.Args[2:])
	case "run":
		err = run(os.Args[2:])
	default:
		err = fmt.Errorf("unknown subcommand %q", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchscan:", err)
		os.Exit(1)
	}
}

// sample is one file of the repository used to build the tree.
type sample struct {
	name string // base name
	data []byte
}

// samples reads the files under the roots (relative to the repository)
// whose names keep says to take, in lexical order.
func samples(roots []string, keep func(string) bool) ([]sample, error) {
	var out []sample
	for _, root := range roots {
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !keep(path) {
				return err
			}
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			out = append(out, sample{name: filepath.Base(path), data: b})
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no samples under %s (run from the repository root)", strings.Join(roots, ", "))
	}
	return out, nil
}

func gen(args []string) error {
	fl := flag.NewFlagSet("gen", flag.ContinueOnError)
	out := fl.String("out", "", "directory to write the tree into (created)")
	files := fl.Int("files", 2000, "number of files")
	total := fl.Int64("bytes", 34_000_000, "total size in bytes (approximate)")
	if err := fl.Parse(args); err != nil {
		return err
	}
	if *out == "" || *files <= 0 || *total <= 0 {
		return fmt.Errorf("gen needs -out, -files > 0 and -bytes > 0")
	}
	sqlSamples, err := samples([]string{"testdata/sample", "rules/testdata"}, func(p string) bool {
		ext := filepath.Ext(p)
		return ext == ".sql" || ext == ".psql"
	})
	if err != nil {
		return err
	}
	codeSamples, err := samples([]string{"analyzer/testdata/code"}, func(string) bool { return true })
	if err != nil {
		return err
	}
	mean := *total / int64(*files)
	var written int64
	for i := range *files {
		// A size from mean/4 to 7·mean/4, spread evenly over the files.
		h := int64((i*7919 + 13) % 1001)
		size := int(mean/4 + mean*3/2*h/1000)
		var name string
		var body []byte
		if i%5 < 3 {
			j := (i * 7) % len(sqlSamples)
			name = sqlSamples[j].name
			body = fill(size, func(k int) []byte { return sqlSamples[(j+k)%len(sqlSamples)].data })
		} else {
			s := codeSamples[(i/5*3+i%5)%len(codeSamples)]
			name = s.name
			body = fill(size, func(int) []byte { return s.data })
		}
		path := filepath.Join(*out, fmt.Sprintf("d%03d", i/100), fmt.Sprintf("f%05d_%s", i, name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(path, body, 0o644); err != nil {
			return err
		}
		written += int64(len(body))
	}
	fmt.Printf("%d files, %d bytes\n", *files, written)
	return nil
}

// fill joins part(0), part(1), … while each part brings the length closer
// to size; at least one part is taken.
func fill(size int, part func(int) []byte) []byte {
	var b []byte
	for k := 0; ; k++ {
		p := part(k)
		if k > 0 && len(b)+len(p)/2 > size {
			return b
		}
		b = append(b, p...)
		if b[len(b)-1] != '\n' {
			b = append(b, '\n')
		}
	}
}

func run(args []string) error {
	fl := flag.NewFlagSet("run", flag.ContinueOnError)
	outPath := fl.String("o", "", "file for the command's standard output (default: discarded)")
	if err := fl.Parse(args); err != nil {
		return err
	}
	args = fl.Args()
	if len(args) == 0 {
		return fmt.Errorf("run needs a command")
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stderr = os.Stderr
	if *outPath != "" {
		out, err := os.OpenFile(*outPath, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
		if err != nil {
			return err
		}
		defer out.Close()
		cmd.Stdout = out
	}
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start)
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		return err
	}
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		return fmt.Errorf("no resource usage on this system")
	}
	// Linux reports ru_maxrss in kilobytes.
	fmt.Printf("wall_s %.2f maxrss_kb %d exit %d\n", wall.Seconds(), ru.Maxrss, cmd.ProcessState.ExitCode())
	return nil
}
