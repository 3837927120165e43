package cli

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
)

// TestSecretsStayOutOfErrors: every input that can hold a password —
// the upstream URL as a flag, in the environment and in the YAML config,
// pgbouncer.ini's [databases] entries, and the auth file's lines, given
// through --auth-file, the YAML config and pgbouncer.ini — is broken on
// purpose, and the proxy refuses to start (exit 2) without writing the
// password anywhere. TestProxyErrorsHideThePassword has more forms of the
// upstream flag.
func TestSecretsStayOutOfErrors(t *testing.T) {
	const secret = "s3cr3t-pw"
	dir := t.TempDir()
	file := func(name, text string) string {
		return writeProxyFile(t, filepath.Join(dir), name, text)
	}
	badUpstream := "postgres://app:" + secret + "@host:notaport/db"
	badUserlists := map[string]string{
		"unquoted password": `"app" ` + secret + "\n",
		"unclosed password": `"app" "` + secret + "\n",
		"unquoted user":     "app:" + secret + "\n",
		"unclosed user":     `"app ` + secret + "\n",
	}
	type tc struct {
		name string
		env  map[string]string
		args []string
		want string // in stderr: what was refused
	}
	cases := []tc{
		{name: "upstream flag", args: []string{"--upstream", badUpstream}, want: "upstream"},
		{name: "upstream in the environment", env: map[string]string{"PGPOOLCHECK_UPSTREAM": badUpstream}, want: "upstream"},
		{name: "upstream in YAML", args: []string{"--config", file("up.yaml", "upstream: "+badUpstream+"\n")}, want: "upstream"},
		{name: "upstream in YAML, keyword form", args: []string{"--config",
			file("upkw.yaml", "upstream: \"host=h password="+secret+" port=notaport\"\n")}, want: "upstream"},
	}
	for i, entry := range []string{
		"app = host=h password=" + secret + " port=notaport",
		"app = host=h password='" + secret + "' port=notaport",
		"app = host=h password=" + secret + " oops",
		"app = host=h password=" + secret + " dbname='unclosed",
		"app = host=h user=u password=" + secret + " pool_size=many",
	} {
		ini := file("db"+string(rune('a'+i))+".ini", "[databases]\n"+entry+"\n\n[pgbouncer]\nlisten_addr = 127.0.0.1\nlisten_port = 6999\n")
		cases = append(cases, tc{name: "ini databases " + entry[:20], args: []string{"--pgbouncer-ini", ini}, want: "database app"})
	}
	for what, text := range badUserlists {
		ul := file(strings.ReplaceAll(what, " ", "-")+".txt", text)
		cases = append(cases,
			tc{name: "auth file flag, " + what, args: []string{"--upstream", "postgres://app@127.0.0.1:1/db", "--auth-type", "md5", "--auth-file", ul}, want: "line 1"},
			tc{name: "auth file in YAML, " + what, args: []string{"--upstream", "postgres://app@127.0.0.1:1/db",
				"--config", file(strings.ReplaceAll(what, " ", "-")+".yaml", "auth_type: md5\nauth_file: "+ul+"\n")}, want: "line 1"},
			tc{name: "auth file in ini, " + what, args: []string{"--pgbouncer-ini", file(strings.ReplaceAll(what, " ", "-")+".ini",
				"[databases]\n* = host=127.0.0.1 port=1\n\n[pgbouncer]\nlisten_addr = 127.0.0.1\nlisten_port = 6999\nauth_type = md5\nauth_file = "+ul+"\n")}, want: "line 1"},
		)
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			// An address that cannot be listened on: nothing starts even if
			// the input were accepted, and trust is allowed there.
			args := append([]string{"proxy", "--listen", "256.0.0.1:1", "--insecure-trust"}, c.args...)
			code := run(context.Background(), args, &env{
				stdin: strings.NewReader(""), stdout: &out, stderr: &errb,
				getenv: func(k string) string { return c.env[k] },
			})
			if code != ExitError || !strings.Contains(errb.String(), c.want) {
				t.Errorf("exit %d, stderr %q; want %d naming %q", code, errb.String(), ExitError, c.want)
			}
			if strings.Contains(out.String()+errb.String(), secret) || strings.Contains(out.String()+errb.String(), "s3cr3t") {
				t.Errorf("the password is in the output: %q", out.String()+errb.String())
			}
		})
	}
}
