package pooler

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strings"
)

// Userlist maps user names to secrets as PgBouncer's auth_file holds them:
// a plain-text password, "md5" followed by md5(password+user) in hex, or a
// SCRAM-SHA-256 verifier "SCRAM-SHA-256$iter:salt$storedkey:serverkey".
type Userlist map[string]string

// LoadUserlist reads a userlist file.
func LoadUserlist(path string) (Userlist, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	u, err := ParseUserlist(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return u, nil
}

// ParseUserlist reads PgBouncer's userlist format: one user per line,
// `"name" "secret"`, each field in double quotes with a doubled quote for a
// literal one; anything after the second field is ignored, as are blank
// lines and lines starting with ';' or '#'. A malformed line is an error
// naming its line number but never its content, which may hold a password.
func ParseUserlist(r io.Reader) (Userlist, error) {
	u := make(Userlist)
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	line := 0
	for sc.Scan() {
		line++
		s := strings.TrimSpace(sc.Text())
		if s == "" || s[0] == ';' || s[0] == '#' {
			continue
		}
		name, rest, ok := quotedField(s)
		if !ok {
			return nil, fmt.Errorf("line %d: want a double-quoted user name", line)
		}
		secret, _, ok := quotedField(strings.TrimLeft(rest, " \t"))
		if !ok {
			return nil, fmt.Errorf("line %d: want a double-quoted password after the user name", line)
		}
		if name == "" {
			return nil, fmt.Errorf("line %d: empty user name", line)
		}
		u[name] = secret
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return u, nil
}

// quotedField reads a double-quoted field at the start of s, where "" is a
// literal quote, and returns it and the rest of s.
func quotedField(s string) (field, rest string, ok bool) {
	if s == "" || s[0] != '"' {
		return "", "", false
	}
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		if s[i] != '"' {
			b.WriteByte(s[i])
			continue
		}
		if i+1 < len(s) && s[i+1] == '"' {
			b.WriteByte('"')
			i++
			continue
		}
		return b.String(), s[i+1:], true
	}
	return "", "", false
}
