package pgparams

import (
	"errors"
	"fmt"
	"strings"
)

// Option is one switch of an options string.
type Option struct {
	// Name and Value are those of a setting (-c name=value, -cname=value,
	// --name=value), with each '-' of the name read as '_', as the server
	// reads it; the name keeps its case. Both are empty when Err is set.
	Name, Value string
	// Err says why the switch is not a setting: another command-line
	// switch, -c with nothing after it, a setting without '=' or with an
	// empty name, or a name the caller's check refused.
	Err error
	// Start and End are the switch's byte range in the options string,
	// escapes included (both words of -c name=value).
	Start, End int
}

// Setting is a run-time parameter that an options string sets.
type Setting struct{ Name, Value string }

// Options reads v, the options startup parameter (PGOPTIONS, options= in
// a connection string), as PostgreSQL does: pg_split_opts splits it into
// words at white space, a backslash making the next byte part of the word
// (one at the very end is dropped), and the backend reads the words as
// command-line switches, of which a client gives settings: -c name=value,
// -cname=value and --name=value (ParseLongOption cuts at the first '=' and
// reads '-' in the name as '_'). Each other word is an Option with Err
// set, as is a setting whose name valid (may be nil) refuses; valid gets
// the name with its dashes read as underscores.
//
// Err marks what is not read here as a setting. The server takes a few
// such switches too (-e and -f x set parameters of their own, and a lone
// "--" ends the switches); no caller passes them on.
func Options(v string, valid func(name string) bool) []Option {
	ws := split(v)
	out := make([]Option, 0, len(ws))
	for i := 0; i < len(ws); i++ {
		w := ws[i]
		o := Option{Start: w.start, End: w.end}
		var arg string
		switch {
		case w.text == "-c":
			if i+1 == len(ws) {
				o.Err = errors.New("-c without a setting")
				out = append(out, o)
				continue
			}
			i++
			arg, o.End = ws[i].text, ws[i].end
		case strings.HasPrefix(w.text, "--"), strings.HasPrefix(w.text, "-c"):
			arg = w.text[2:]
		default:
			o.Err = fmt.Errorf("only -c name=value settings are supported, not %q", w.text)
			out = append(out, o)
			continue
		}
		name, value, ok := strings.Cut(arg, "=")
		name = strings.ReplaceAll(name, "-", "_")
		if !ok || name == "" || valid != nil && !valid(name) {
			o.Err = fmt.Errorf("invalid setting %q", arg)
		} else {
			o.Name, o.Value = name, value
		}
		out = append(out, o)
	}
	return out
}

// Settings returns the settings of options string v (Options), or the
// error of its first switch that is not a setting valid (may be nil)
// accepts.
func Settings(v string, valid func(name string) bool) ([]Setting, error) {
	var sets []Setting
	for _, o := range Options(v, valid) {
		if o.Err != nil {
			return nil, o.Err
		}
		sets = append(sets, Setting{Name: o.Name, Value: o.Value})
	}
	return sets, nil
}

// word is a word of an options string, its escapes removed, and its byte
// range in the string.
type word struct {
	text       string
	start, end int
}

// split splits an options string into words as pg_split_opts does.
func split(v string) []word {
	var out []word
	for i := 0; i < len(v); {
		for i < len(v) && isSpace(v[i]) {
			i++
		}
		if i == len(v) {
			break
		}
		start, escaped := i, false
		for i < len(v) && !isSpace(v[i]) {
			if v[i] == '\\' {
				escaped = true
				if i+1 < len(v) {
					i++ // the escaped byte, white space or not
				}
			}
			i++
		}
		text := v[start:i]
		if escaped {
			text = unescape(text)
		}
		out = append(out, word{text: text, start: start, end: i})
	}
	return out
}

// unescape returns w with each backslash removed and the byte after it
// kept as it is.
func unescape(w string) string {
	b := make([]byte, 0, len(w))
	for i := 0; i < len(w); i++ {
		if w[i] == '\\' {
			i++
			if i == len(w) {
				break
			}
		}
		b = append(b, w[i])
	}
	return string(b)
}

// isSpace reports whether c is white space to the C library's isspace
// (the server splits with it).
func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'
}
