package install

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/pgpoolcheck/pgpoolcheck/internal/pgtest"
)

// imageUID is the uid (and gid) of the image's user.
const imageUID = 10001

// runtimeStage returns the lines of the Dockerfile's last stage (the
// image), continuation lines joined.
func runtimeStage(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root(t), "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	var stage []string
	for _, line := range strings.Split(strings.ReplaceAll(string(b), "\\\n", " "), "\n") {
		if strings.HasPrefix(line, "FROM ") {
			stage = nil
		}
		stage = append(stage, line)
	}
	return stage
}

// TestDockerfileRuntimeStage checks what the image needs to serve: the
// system CAs and git installed, the working directory the image's user
// owns, the user itself.
func TestDockerfileRuntimeStage(t *testing.T) {
	stage := strings.Join(runtimeStage(t), "\n")
	for _, want := range []string{
		"apt-get install -y --no-install-recommends ca-certificates git",
		"git config --system --add safe.directory '*'",
		fmt.Sprintf("--uid %d --gid %d", imageUID, imageUID),
		fmt.Sprintf("chown %d:%d /src", imageUID, imageUID),
		fmt.Sprintf("USER %d", imageUID),
		"WORKDIR /src",
		"EXPOSE 6432",
	} {
		if !strings.Contains(stage, want) {
			t.Errorf("the runtime stage lacks %q:\n%s", want, stage)
		}
	}
}

// TestImageVersion: the build stage stamps the VERSION build argument
// into the binary.
func TestImageVersion(t *testing.T) {
	bin := dockerBuild(t)
	out, err := exec.Command(bin, "--version").Output()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.TrimSpace(string(out)), "pgpoolcheck "+buildVersion; got != want {
		t.Errorf("--version = %q, want %q (the VERSION build argument)", got, want)
	}
}

// asImageUser makes cmd run as the image's user when the test runs as
// root (as the container would); otherwise as the test's own user, which
// is as unprivileged as the image's.
func asImageUser(cmd *exec.Cmd) {
	if os.Geteuid() == 0 {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: imageUID, Gid: imageUID}}
	}
}

// imageDir makes a directory that the image's user may read (and, with
// owned, owns).
func imageDir(t *testing.T, owned bool) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "pgpoolcheck-image")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if owned {
		chownImage(t, dir)
	}
	return dir
}

// chownImage gives path to the image's user when the test runs as root.
func chownImage(t *testing.T, path string) {
	t.Helper()
	if os.Geteuid() == 0 {
		if err := os.Chown(path, imageUID, imageUID); err != nil {
			t.Fatal(err)
		}
	}
}

// fencedBlock returns the first ```lang block of doc that contains text.
func fencedBlock(t *testing.T, doc, lang, text string) string {
	t.Helper()
	re := regexp.MustCompile("(?s)```" + lang + "\n(.*?)```")
	for _, m := range re.FindAllStringSubmatch(doc, -1) {
		if strings.Contains(m[1], text) {
			return m[1]
		}
	}
	t.Fatalf("no ```%s block with %q", lang, text)
	return ""
}

// shellWords splits a POSIX shell command line without expansions into
// words: blanks separate, single and double quotes group, a backslash
// and newline continue the line.
func shellWords(t *testing.T, s string) []string {
	t.Helper()
	var words []string
	var w strings.Builder
	inWord := false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\\' && i+1 < len(s) && s[i+1] == '\n':
			i++
		case c == ' ' || c == '\t' || c == '\n':
			if inWord {
				words = append(words, w.String())
				w.Reset()
				inWord = false
			}
		case c == '\'' || c == '"':
			end := strings.IndexByte(s[i+1:], c)
			if end < 0 {
				t.Fatalf("unterminated quote in %q", s)
			}
			w.WriteString(s[i+1 : i+1+end])
			i += end + 1
			inWord = true
		default:
			w.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, w.String())
	}
	return words
}

// dockerRun is a parsed `docker run` command line.
type dockerRun struct {
	user   string
	mounts map[string]string // container path → host path
	env    map[string]string
	image  string
	args   []string
}

func parseDockerRun(t *testing.T, line string) dockerRun {
	t.Helper()
	words := shellWords(t, line)
	if len(words) < 3 || words[0] != "docker" || words[1] != "run" {
		t.Fatalf("not a docker run command: %q", line)
	}
	r := dockerRun{mounts: map[string]string{}, env: map[string]string{}}
	i := 2
	for ; i < len(words) && strings.HasPrefix(words[i], "-"); i++ {
		switch opt := words[i]; opt {
		case "-d", "--rm":
		case "--name", "-p", "--user", "-v", "-e":
			if i+1 >= len(words) {
				t.Fatalf("%s without a value in %q", opt, line)
			}
			i++
			v := words[i]
			switch opt {
			case "--user":
				r.user = v
			case "-v":
				parts := strings.Split(v, ":")
				r.mounts[parts[1]] = parts[0]
			case "-e":
				k, val, _ := strings.Cut(v, "=")
				r.env[k] = val
			}
		default:
			t.Fatalf("docker run option %s: not known to this test", opt)
		}
	}
	if i >= len(words) {
		t.Fatalf("no image in %q", line)
	}
	r.image, r.args = words[i], words[i+1:]
	return r
}

// selfSigned writes a certificate for localhost and its key.
func selfSigned(t *testing.T, certPath, keyPath string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "localhost"},
		DNSNames:     []string{"localhost"},
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1")},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(certPath, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyPath, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600); err != nil {
		t.Fatal(err)
	}
}

// freePort returns a TCP port free on 127.0.0.1 just now.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// TestImageProxy runs the image's binary as the image runs it (uid 10001,
// working directory /src's stand-in) with the arguments, environment and
// config file of docs/container.md, against a throwaway PostgreSQL, and
// logs a client in through it with TLS and SCRAM. No container runtime is
// needed: the documented mount is a directory here. Two things differ from
// the documented run: the port (6432 may be taken on a test machine) and
// the upstream URL (the throwaway server's).
func TestImageProxy(t *testing.T) {
	bin := dockerBuild(t)
	doc, err := os.ReadFile(filepath.Join(root(t), "docs", "container.md"))
	if err != nil {
		t.Fatal(err)
	}
	config := fencedBlock(t, string(doc), "yaml", "listen: 0.0.0.0:6432")
	run := parseDockerRun(t, fencedBlock(t, string(doc), "sh", "pgpoolcheck proxy"))
	if run.image != "pgpoolcheck" || len(run.args) == 0 || run.args[0] != "proxy" {
		t.Fatalf("the documented command runs %s %v", run.image, run.args)
	}
	if _, ok := run.env["PGPOOLCHECK_UPSTREAM"]; !ok {
		t.Fatalf("the documented command gives no PGPOOLCHECK_UPSTREAM: %v", run.env)
	}
	const etc = "/etc/pgpoolcheck"
	if _, ok := run.mounts[etc]; !ok {
		t.Fatalf("the documented command mounts nothing at %s: %v", etc, run.mounts)
	}

	srv := pgtest.Shared(t)
	// The mounted directory: the documented proxy.yaml, a userlist, a
	// certificate and key, readable by the image's user (the key and the
	// userlist only by it, as the documentation says to make them).
	dir := imageDir(t, false)
	port := freePort(t)
	config = strings.Replace(config, "0.0.0.0:6432", fmt.Sprintf("0.0.0.0:%d", port), 1)
	if err := os.WriteFile(filepath.Join(dir, "proxy.yaml"), []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	userlist := fmt.Sprintf("%q %q\n", pgtest.SCRAMUser, pgtest.SCRAMPassword)
	if err := os.WriteFile(filepath.Join(dir, "userlist.txt"), []byte(userlist), 0o600); err != nil {
		t.Fatal(err)
	}
	selfSigned(t, filepath.Join(dir, "server.crt"), filepath.Join(dir, "server.key"))
	chownImage(t, filepath.Join(dir, "userlist.txt"))
	chownImage(t, filepath.Join(dir, "server.key"))

	var args []string
	for _, a := range run.args {
		args = append(args, strings.ReplaceAll(a, etc, dir))
	}
	cmd := exec.Command(bin, args...)
	cmd.Dir = imageDir(t, true) // the image's /src
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=/nonexistent",
		"PGPOOLCHECK_UPSTREAM=" + srv.TCPURL(pgtest.SCRAMUser, pgtest.SCRAMPassword)}
	asImageUser(cmd)
	var log strings.Builder
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer func() {
		cmd.Process.Kill()
		<-exited
	}()
	deadline := time.Now().Add(30 * time.Second)
	for {
		c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err == nil {
			c.Close()
			break
		}
		select {
		case err := <-exited:
			exited <- err // for the deferred wait
			t.Fatalf("the proxy exited: %v\n%s", err, log.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("the proxy does not listen on %d after 30s:\n%s", port, log.String())
		}
		time.Sleep(50 * time.Millisecond)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	url := func(sslmode string) string {
		return fmt.Sprintf("postgres://%s:%s@127.0.0.1:%d/%s?sslmode=%s", pgtest.SCRAMUser, pgtest.SCRAMPassword, port, pgtest.Database, sslmode)
	}
	conn, err := pgx.Connect(ctx, url("require"))
	if err != nil {
		t.Fatalf("a client with TLS and SCRAM: %v\n%s", err, log.String())
	}
	var user string
	if err := conn.QueryRow(ctx, "SELECT current_user::text").Scan(&user); err != nil {
		t.Fatalf("query through the proxy: %v\n%s", err, log.String())
	}
	if user != pgtest.SCRAMUser {
		t.Errorf("current_user %q through the proxy, want %q", user, pgtest.SCRAMUser)
	}
	if _, ok := conn.PgConn().Conn().(*tls.Conn); !ok {
		t.Errorf("the client's connection is %T, not TLS", conn.PgConn().Conn())
	}
	conn.Close(ctx)
	if c, err := pgx.Connect(ctx, url("disable")); err == nil {
		c.Close(ctx)
		t.Error("a plaintext client logged in; client_tls_sslmode require should refuse it")
	} else if !strings.Contains(err.Error(), "SSL required") {
		t.Errorf("a plaintext client: %v, want SSL required", err)
	}

	// docker stop: SIGTERM, a clean exit.
	cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-exited:
		exited <- err
		if err != nil {
			t.Errorf("the proxy exited with %v after SIGTERM:\n%s", err, log.String())
		}
	case <-time.After(40 * time.Second):
		t.Errorf("the proxy did not exit 40s after SIGTERM:\n%s", log.String())
	}
}

// TestImageScan runs the image's binary as the image's user on a
// repository that belongs to another uid (a mounted one), with the system
// git config the Dockerfile writes: .gitignore is honoured. A baseline is
// written as docs/container.md says, as the owner of the repository.
func TestImageScan(t *testing.T) {
	bin := dockerBuild(t)
	if os.Geteuid() != 0 {
		t.Log("not root: the repository and the scan have the same owner, so git's ownership check is not exercised")
	}
	repo := imageDir(t, false)
	files := map[string]string{
		".gitignore":      "generated/\n",
		"db/001.sql":      "LISTEN jobs;\n",
		"generated/x.sql": "SET search_path = app;\n",
	}
	for name, text := range files {
		path := filepath.Join(repo, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if out, err := exec.Command("git", "-C", repo, "init", "-q").CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	// The Dockerfile's `git config --system …`, into a system config of
	// the test's own.
	sysconfig := filepath.Join(imageDir(t, false), "gitconfig")
	var gitConfig string
	for _, line := range runtimeStage(t) {
		if i := strings.Index(line, "git config --system"); i >= 0 {
			gitConfig = line[i:]
			if j := strings.Index(gitConfig, " && "); j >= 0 {
				gitConfig = gitConfig[:j]
			}
		}
	}
	if gitConfig == "" {
		t.Fatal("the runtime stage runs no git config --system")
	}
	cfg := exec.Command("bash", "-c", gitConfig)
	cfg.Env = append(os.Environ(), "GIT_CONFIG_SYSTEM="+sysconfig)
	if out, err := cfg.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", gitConfig, err, out)
	}
	if err := os.Chmod(sysconfig, 0o644); err != nil {
		t.Fatal(err)
	}

	var stderr strings.Builder
	scan := func(system string) []string {
		cmd := exec.Command(bin, "scan", "--no-config", "--format", "json", "--fail-on", "never", ".")
		cmd.Dir = repo
		cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=/nonexistent", "GIT_CONFIG_SYSTEM=" + system, "GIT_CONFIG_GLOBAL=/dev/null"}
		asImageUser(cmd)
		stderr.Reset()
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("scan: %v\n%s%s", err, out, stderr.String())
		}
		var doc struct {
			Findings []struct{ File string } `json:"findings"`
		}
		if err := json.Unmarshal(out, &doc); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		var got []string
		for _, f := range doc.Findings {
			got = append(got, f.File)
		}
		return got
	}
	if got := scan(sysconfig); len(got) != 1 || got[0] != "./db/001.sql" || stderr.Len() > 0 {
		t.Errorf("scan with the image's git config found %v, stderr %q; want only ./db/001.sql (generated/ is ignored)", got, stderr.String())
	}
	if os.Geteuid() == 0 {
		// Without it, git refuses the repository of another uid and
		// .gitignore is not honoured (scan says so): the config is what
		// makes it work.
		if got := scan("/dev/null"); len(got) != 2 || !strings.Contains(stderr.String(), "dubious ownership") {
			t.Errorf("scan without the image's git config found %v, stderr %q; the test expects git to refuse the repository", got, stderr.String())
		}
	}

	// The documented baseline command runs as the repository's owner.
	doc, err := os.ReadFile(filepath.Join(root(t), "docs", "container.md"))
	if err != nil {
		t.Fatal(err)
	}
	run := parseDockerRun(t, fencedBlock(t, string(doc), "sh", "--write-baseline"))
	if run.user != "$(id -u):$(id -g)" || run.mounts["/src"] != "$PWD" {
		t.Fatalf("the documented baseline command: user %q, mounts %v", run.user, run.mounts)
	}
	cmd := exec.Command(bin, run.args...)
	cmd.Dir = repo
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=/nonexistent", "GIT_CONFIG_SYSTEM=" + sysconfig}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v: %v\n%s", run.args, err, out)
	}
	if _, err := os.Stat(filepath.Join(repo, ".pgpoolcheck-baseline.json")); err != nil {
		t.Errorf("the baseline was not written: %v", err)
	}
}
