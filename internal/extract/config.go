package extract

import (
	"path/filepath"
	"strings"
)

// Configuration files that hold connection strings: .env files, Java
// properties, YAML (Spring's application.yml, Rails' database.yml,
// docker-compose and Kubernetes manifests) and .NET's appsettings.json.
// Their lexers only find the values and the keys that hold them, enough to
// look for connection strings and a few driver settings; they never fail.

// ConfigFormat is a kind of configuration file.
type ConfigFormat string

// The configuration formats understood by ConfigValues.
const (
	DotEnv      ConfigFormat = "dotenv"
	Properties  ConfigFormat = "properties"
	YAML        ConfigFormat = "yaml"
	AppSettings ConfigFormat = "appsettings"
)

// ConfigFormatFor reports the configuration format of a file from its
// name: .env, .env.* and *.env files, *.properties, *.yml and *.yaml, and
// appsettings.json or appsettings.*.json.
func ConfigFormatFor(path string) (ConfigFormat, bool) {
	base := strings.ToLower(filepath.Base(path))
	switch {
	case base == ".env" || strings.HasPrefix(base, ".env.") || strings.HasSuffix(base, ".env"):
		return DotEnv, true
	case strings.HasSuffix(base, ".properties"):
		return Properties, true
	case strings.HasSuffix(base, ".yml") || strings.HasSuffix(base, ".yaml"):
		return YAML, true
	case base == "appsettings.json" || strings.HasPrefix(base, "appsettings.") && strings.HasSuffix(base, ".json"):
		return AppSettings, true
	}
	return "", false
}

// ConfigValue is one value of a configuration file.
type ConfigValue struct {
	// Key names the value: the variable or property name, or the keys of
	// the YAML or JSON mappings that hold it joined with dots
	// (production.variables.statement_timeout, ConnectionStrings.Default).
	Key string
	Literal
}

// ConfigValues returns the values of a configuration file in source order,
// and its comments. Values are decoded as the format says (quotes,
// escapes, line continuations) and map back to the file like literals do.
func ConfigValues(f ConfigFormat, src []byte) ([]ConfigValue, []Comment) {
	cl := &configLexer{src: src}
	if len(src) >= 3 && src[0] == 0xEF && src[1] == 0xBB && src[2] == 0xBF {
		cl.start = 3 // a byte order mark, which .NET tools write
	}
	switch f {
	case DotEnv:
		cl.dotEnv()
	case Properties:
		cl.properties()
	case YAML:
		cl.yaml()
	case AppSettings:
		cl.json()
	}
	return cl.values, cl.comments
}

type configLexer struct {
	src      []byte
	start    int // after a byte order mark
	values   []ConfigValue
	comments []Comment
}

func (cl *configLexer) value(key string, b *builder, start, end int) {
	l := b.literal(start, end)
	if len(l.Segments) == 0 {
		l.Segments = []Segment{{0, start}}
	}
	cl.values = append(cl.values, ConfigValue{Key: key, Literal: l})
}

func (cl *configLexer) comment(start, end, textStart int) {
	for end > start && cl.src[end-1] == '\r' {
		end--
	}
	if textStart > end {
		textStart = end
	}
	cl.comments = append(cl.comments, Comment{Start: start, End: end, Text: string(cl.src[textStart:end])})
}

// lineBounds returns the end of the line at i (before "\r\n" or "\n") and
// the start of the next line.
func lineBounds(src []byte, i int) (end, next int) {
	e := lineEnd(src, i)
	next = e
	if e < len(src) {
		next = e + 1
	}
	if e > i && src[e-1] == '\r' {
		e--
	}
	return e, next
}

func skipSpaces(src []byte, i, end int) int {
	for i < end && (src[i] == ' ' || src[i] == '\t' || src[i] == '\f') {
		i++
	}
	return i
}

// plainEnd returns the end of an unquoted value that starts at i on a line
// ending at end: a '#' after a blank starts a comment (recorded), and
// trailing blanks are dropped.
func (cl *configLexer) plainEnd(i, end int) int {
	src := cl.src
	e := end
	for k := i; k < end; k++ {
		if src[k] == '#' && (k == i || src[k-1] == ' ' || src[k-1] == '\t') {
			cl.comment(k, end, k+1)
			e = k
			break
		}
	}
	for e > i && (src[e-1] == ' ' || src[e-1] == '\t') {
		e--
	}
	return e
}

// dotEnv lexes KEY=value lines (optionally after "export"): values
// unquoted (to a " #" comment), single-quoted (verbatim) or double-quoted
// (with \n, \t, \r, \\, \" and \$ escapes); quoted values may span lines.
func (cl *configLexer) dotEnv() {
	src := cl.src
	for ls := cl.start; ls < len(src); {
		end, next := lineBounds(src, ls)
		i := skipSpaces(src, ls, end)
		if i < end && src[i] == '#' {
			cl.comment(i, end, i+1)
			ls = next
			continue
		}
		if strings.HasPrefix(string(src[i:end]), "export ") {
			i = skipSpaces(src, i+len("export "), end)
		}
		ks := i
		for i < end && (isIdentChar(src[i]) || src[i] == '.' || src[i] == '-') {
			i++
		}
		key := string(src[ks:i])
		i = skipSpaces(src, i, end)
		if key == "" || i >= end || src[i] != '=' {
			ls = next
			continue
		}
		i = skipSpaces(src, i+1, end)
		b := newBuilder()
		switch {
		case i < end && (src[i] == '"' || src[i] == '\''):
			q := src[i]
			j := i + 1
			for j < len(src) && src[j] != q {
				if q == '"' && src[j] == '\\' && j+1 < len(src) {
					switch c := src[j+1]; c {
					case 'n':
						b.decoded("\n", j)
					case 't':
						b.decoded("\t", j)
					case 'r':
						b.decoded("\r", j)
					case '\\', '"', '$':
						b.decoded(string(c), j)
					default:
						b.verbatim(src, j, j+2)
					}
					j += 2
					continue
				}
				b.verbatim(src, j, j+1)
				j++
			}
			if j >= len(src) {
				return // unterminated: the rest of the file is the value
			}
			cl.value(key, &b, i, j+1)
			// A comment may follow on the closing quote's line.
			cend, cnext := lineBounds(src, j+1)
			if k := skipSpaces(src, j+1, cend); k < cend && src[k] == '#' {
				cl.comment(k, cend, k+1)
			}
			next = cnext
		default:
			e := cl.plainEnd(i, end)
			b.verbatim(src, i, e)
			cl.value(key, &b, i, e)
		}
		ls = next
	}
}

// properties lexes Java properties: key=value, key: value or key value
// lines, '#' and '!' comment lines, backslash escapes (\t, \n, \uXXXX, and
// \x for any other x) and line continuations.
func (cl *configLexer) properties() {
	src := cl.src
	for ls := cl.start; ls < len(src); {
		end, next := lineBounds(src, ls)
		i := skipSpaces(src, ls, end)
		if i >= end {
			ls = next
			continue
		}
		if src[i] == '#' || src[i] == '!' {
			cl.comment(i, end, i+1)
			ls = next
			continue
		}
		var key []byte
		for i < end && src[i] != '=' && src[i] != ':' && src[i] != ' ' && src[i] != '\t' && src[i] != '\f' {
			if src[i] == '\\' && i+1 < end {
				i++
			}
			key = append(key, src[i])
			i++
		}
		i = skipSpaces(src, i, end)
		if i < end && (src[i] == '=' || src[i] == ':') {
			i = skipSpaces(src, i+1, end)
		}
		b := newBuilder()
		start := i
		for i < end {
			c := src[i]
			if c != '\\' {
				k := i + 1
				for k < end && src[k] != '\\' {
					k++
				}
				b.verbatim(src, i, k)
				i = k
				continue
			}
			if i+1 >= end {
				// A backslash at the end of a line continues the value on
				// the next line, without its leading blanks.
				b.skip()
				if next >= len(src) {
					i = end
					break
				}
				ls = next
				end, next = lineBounds(src, ls)
				i = skipSpaces(src, ls, end)
				continue
			}
			switch d := src[i+1]; d {
			case 't', 'n', 'r', 'f':
				s, _ := simpleEscape(d)
				b.decoded(s, i)
				i += 2
			case 'u':
				if r, n := hexRun(src, i+2, 4); n == 4 {
					b.decodedRune(r, i)
					i += 6
				} else {
					b.decoded("u", i)
					i += 2
				}
			default:
				i = selfEscape(&b, src, i)
			}
		}
		if len(key) > 0 {
			cl.value(string(key), &b, start, max(i, start))
		}
		ls = next
	}
}

// yamlFrame is a mapping key whose value is on the lines below it.
type yamlFrame struct {
	indent int
	key    string
}

// yaml lexes YAML line by line: block mappings (keys, quoted or plain),
// sequences ("- "), plain, single- and double-quoted scalars (quoted ones
// may span lines), literal and folded block scalars, anchors, tags and
// comments. Flow collections ([…], {…}) are taken as one plain value.
func (cl *configLexer) yaml() {
	src := cl.src
	var stack []yamlFrame
	path := func(key string) string {
		var parts []string
		for _, f := range stack {
			parts = append(parts, f.key)
		}
		if key != "" {
			parts = append(parts, key)
		}
		return strings.Join(parts, ".")
	}
	for ls := cl.start; ls < len(src); {
		end, next := lineBounds(src, ls)
		i := skipSpaces(src, ls, end)
		if cl.yamlBlank(i, end) {
			ls = next
			continue
		}
		if i == ls && (hasWord(src[i:end], "---") || hasWord(src[i:end], "...") || src[i] == '%') {
			stack = stack[:0]
			ls = next
			continue
		}
		indent := i - ls
		item := false
		for i < end && src[i] == '-' && (i+1 == end || src[i+1] == ' ' || src[i+1] == '\t') {
			if !item {
				for len(stack) > 0 && stack[len(stack)-1].indent > indent {
					stack = stack[:len(stack)-1]
				}
			}
			item = true
			i = skipSpaces(src, i+1, end)
			indent = i - ls
		}
		if cl.yamlBlank(i, end) {
			ls = next
			continue
		}
		key, vs, isKey := yamlKey(src, i, end)
		if !isKey {
			// A scalar item (- value).
			ls = cl.yamlScalar(path(""), i, end, next, indent)
			continue
		}
		for len(stack) > 0 && stack[len(stack)-1].indent >= indent {
			stack = stack[:len(stack)-1]
		}
		vs = yamlProperties(src, skipSpaces(src, vs, end), end)
		if vs >= end || src[vs] == '#' {
			if vs < end {
				cl.comment(vs, end, vs+1)
			}
			stack = append(stack, yamlFrame{indent, key})
			ls = next
			continue
		}
		ls = cl.yamlScalar(path(key), vs, end, next, indent)
	}
}

// hasWord reports whether line starts with w followed by a blank or its
// end.
func hasWord(line []byte, w string) bool {
	return strings.HasPrefix(string(line), w) && (len(line) == len(w) || line[len(w)] == ' ' || line[len(w)] == '\t')
}

// yamlKey reads a mapping key at src[i:end]: a quoted or plain key
// followed by ':' and a blank or the line's end. It returns the key and
// the offset after the colon.
func yamlKey(src []byte, i, end int) (key string, after int, ok bool) {
	if src[i] == '"' || src[i] == '\'' {
		q := src[i]
		j := i + 1
		for j < end && src[j] != q {
			if q == '"' && src[j] == '\\' {
				j++
			}
			j++
		}
		if j >= end {
			return "", 0, false
		}
		k := skipSpaces(src, j+1, end)
		if k < end && src[k] == ':' && (k+1 == end || src[k+1] == ' ' || src[k+1] == '\t') {
			return string(src[i+1 : j]), k + 1, true
		}
		return "", 0, false
	}
	if src[i] == '[' || src[i] == '{' || src[i] == '|' || src[i] == '>' || src[i] == '&' || src[i] == '*' || src[i] == '!' {
		return "", 0, false
	}
	for j := i; j < end; j++ {
		switch src[j] {
		case ':':
			if j+1 == end || src[j+1] == ' ' || src[j+1] == '\t' {
				return strings.TrimRight(string(src[i:j]), " \t"), j + 1, true
			}
		case '#':
			if j > i && (src[j-1] == ' ' || src[j-1] == '\t') {
				return "", 0, false
			}
		}
	}
	return "", 0, false
}

// yamlProperties skips an anchor (&name) and a tag (!tag) before a value.
func yamlProperties(src []byte, i, end int) int {
	for i < end && (src[i] == '&' || src[i] == '!') {
		for i < end && src[i] != ' ' && src[i] != '\t' {
			i++
		}
		i = skipSpaces(src, i, end)
	}
	return i
}

// yamlBlank reports whether the rest of a YAML line, from i to end, is
// blank or a comment, which it then adds.
func (cl *configLexer) yamlBlank(i, end int) bool {
	if i >= end {
		return true
	}
	if cl.src[i] == '#' {
		cl.comment(i, end, i+1)
		return true
	}
	return false
}

// yamlScalar lexes the scalar value at src[i:end] of a key (or sequence
// item) at indent, and returns where the next line to lex starts.
func (cl *configLexer) yamlScalar(key string, i, end, next, indent int) int {
	src := cl.src
	switch c := src[i]; {
	case c == '*':
		return next // an alias
	case c == '|' || c == '>':
		j := i + 1
		for j < end && (src[j] == '+' || src[j] == '-' || isDigit(src[j])) {
			j++
		}
		j = skipSpaces(src, j, end)
		if j < end && src[j] != '#' {
			break // not a block indicator: a plain scalar
		}
		if j < end {
			cl.comment(j, end, j+1)
		}
		return cl.yamlBlock(key, c == '>', next, indent)
	case c == '"' || c == '\'':
		return cl.yamlQuoted(key, i)
	}
	e := cl.plainEnd(i, end)
	b := newBuilder()
	b.verbatim(src, i, e)
	cl.value(key, &b, i, e)
	return next
}

// yamlBlock lexes the lines of a block scalar that starts at ls, below a
// key at indent: literal (lines joined by line breaks) or folded (by
// blanks). Trailing line breaks are dropped.
func (cl *configLexer) yamlBlock(key string, folded bool, ls, indent int) int {
	src := cl.src
	b := newBuilder()
	blockIndent := -1
	last := ls
	var breaks []int // the line breaks since the last content line
	for ls < len(src) {
		end, next := lineBounds(src, ls)
		i := skipSpaces(src, ls, end)
		if i < end && (blockIndent < 0 && i-ls <= indent || blockIndent >= 0 && i-ls < blockIndent) {
			break // a less indented line ends the block
		}
		if i < end {
			if blockIndent < 0 {
				blockIndent = i - ls
			}
			for _, br := range breaks {
				if folded {
					b.decoded(" ", br)
				} else {
					b.decoded("\n", br)
				}
			}
			breaks = breaks[:0]
			b.verbatim(src, ls+blockIndent, end)
			b.skip()
			last = end
		}
		if blockIndent >= 0 && end < len(src) {
			breaks = append(breaks, end)
		}
		ls = next
	}
	if blockIndent >= 0 {
		start := last
		if len(b.segs) > 0 {
			start = b.segs[0].Source
		}
		cl.value(key, &b, start, last)
	}
	return ls
}

// yamlQuoted lexes a quoted scalar at src[i]; a line break inside it folds
// into a blank (the next line's indentation dropped).
func (cl *configLexer) yamlQuoted(key string, i int) int {
	src := cl.src
	q := src[i]
	b := newBuilder()
	j := i + 1
	for j < len(src) {
		c := src[j]
		switch {
		case c == q && q == '\'' && j+1 < len(src) && src[j+1] == '\'':
			b.decoded("'", j)
			j += 2
		case c == q:
			cl.value(key, &b, i, j+1)
			end, nl := lineBounds(src, j+1)
			if k := skipSpaces(src, j+1, end); k < end && src[k] == '#' {
				cl.comment(k, end, k+1)
			}
			return nl
		case c == '\n' || c == '\r':
			_, nl := lineBounds(src, j)
			if nl >= len(src) {
				return len(src)
			}
			k := nl
			for k < len(src) && (src[k] == ' ' || src[k] == '\t') {
				k++
			}
			b.decoded(" ", j)
			j = k
		case c == '\\' && q == '"' && j+1 < len(src):
			j = yamlEscape(&b, src, j)
		default:
			k := j + 1
			for k < len(src) && src[k] != q && src[k] != '\\' && src[k] != '\n' && src[k] != '\r' {
				k++
			}
			b.verbatim(src, j, k)
			j = k
		}
	}
	return len(src) // unterminated: the rest of the file
}

// yamlEscapes are YAML's one-character escapes beyond the C ones
// simpleEscape knows.
var yamlEscapes = map[byte]string{
	'0': "\x00", 'e': "\x1b", 'N': "\u0085", '_': "\u00a0", 'L': "\u2028", 'P': "\u2029",
	' ': " ", '/': "/", '\t': "\t",
}

// yamlHexLen is how many hex digits YAML's \x, \u and \U escapes take.
var yamlHexLen = map[byte]int{'x': 2, 'u': 4, 'U': 8}

// yamlEscape decodes the escape at src[j] in a double-quoted scalar.
func yamlEscape(b *builder, src []byte, j int) int {
	c := src[j+1]
	if n := yamlHexLen[c]; n > 0 {
		if r, got := hexRun(src, j+2, n); got == n {
			b.decodedRune(r, j)
			return j + 2 + n
		}
	} else if s, ok := yamlEscapes[c]; ok {
		b.decoded(s, j)
		return j + 2
	}
	if s, ok := simpleEscape(c); ok {
		b.decoded(s, j)
		return j + 2
	}
	return selfEscape(b, src, j)
}

// jsonFrame is an open JSON object or array.
type jsonFrame struct {
	object bool
	key    string // the key of the member being read (objects)
}

// json lexes JSON with the comments .NET's configuration reader accepts
// (// and /* */) and trailing commas: every string value, with the keys of
// the objects that hold it.
func (cl *configLexer) json() {
	src := cl.src
	var stack []jsonFrame
	wantKey := false
	path := func() string {
		var parts []string
		for _, f := range stack {
			if f.object && f.key != "" {
				parts = append(parts, f.key)
			}
		}
		return strings.Join(parts, ".")
	}
	for i := cl.start; i < len(src); {
		c := src[i]
		switch {
		case c == '/' && i+1 < len(src) && src[i+1] == '/':
			end := lineEnd(src, i)
			cl.comment(i, end, i+2)
			i = end
		case c == '/' && i+1 < len(src) && src[i+1] == '*':
			end, textEnd := blockCommentEnd(src, i+2, false)
			cl.comments = append(cl.comments, Comment{Start: i, End: end, Text: string(src[i+2 : textEnd])})
			i = end
		case c == '{':
			stack = append(stack, jsonFrame{object: true})
			wantKey = true
			i++
		case c == '[':
			stack = append(stack, jsonFrame{})
			wantKey = false
			i++
		case c == '}' || c == ']':
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
			wantKey = false
			i++
		case c == ',':
			wantKey = len(stack) > 0 && stack[len(stack)-1].object
			i++
		case c == ':':
			wantKey = false
			i++
		case c == '"':
			b := newBuilder()
			j := i + 1
			for j < len(src) && src[j] != '"' && src[j] != '\n' {
				if src[j] == '\\' && j+1 < len(src) {
					switch d := src[j+1]; d {
					case 'u':
						if r, n := hexRun(src, j+2, 4); n == 4 {
							b.decodedRune(r, j)
							j += 6
							continue
						}
					case '/':
						b.decoded("/", j)
						j += 2
						continue
					}
					if s, ok := simpleEscape(src[j+1]); ok {
						b.decoded(s, j)
						j += 2
						continue
					}
					b.verbatim(src, j, j+1)
					j++
					continue
				}
				k := j + 1
				for k < len(src) && src[k] != '"' && src[k] != '\\' && src[k] != '\n' {
					k++
				}
				b.verbatim(src, j, k)
				j = k
			}
			if j >= len(src) || src[j] != '"' {
				i = j // unterminated: dropped
				continue
			}
			top := len(stack) - 1
			if top >= 0 && stack[top].object && wantKey {
				stack[top].key = string(b.val)
			} else {
				cl.value(path(), &b, i, j+1)
			}
			i = j + 1
		default:
			i++
		}
	}
}
