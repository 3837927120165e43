// Package yamlpos gives the YAML parser's syntax errors the line they are
// on. go.yaml.in/yaml/v3 numbers the lines of its scanner's errors (a tab,
// an unterminated quote) right, but for its parser's errors ("did not find
// expected key", an unclosed [ or {) it reports the 0-based line where the
// enclosing block or flow began: a comment line above a mis-indented key,
// or line 1 for a document whose second line is wrong. For those, the
// position comes from github.com/goccy/go-yaml's parser, which reports the
// token at fault.
package yamlpos

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	goccy "github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/parser"
)

// parserErrors are the messages of yaml/v3's parser (parserc.go), whose
// line numbers are wrong; its scanner's messages are not among them.
var parserErrors = []string{
	"did not find expected ',' or ']'",
	"did not find expected ',' or '}'",
	"did not find expected '-' indicator",
	"did not find expected <document start>",
	"did not find expected <stream-start>",
	"did not find expected key",
	"did not find expected node content",
	"found duplicate %TAG directive",
	"found duplicate %YAML directive",
	"found incompatible YAML document",
	"found undefined tag handle",
}

var lineMsg = regexp.MustCompile(`^(?:yaml: )?(?:line \d+: )?(.*)$`)

// Error returns err, a syntax error yaml/v3 gave for the document src,
// with its "yaml: " prefix removed and, for a parser error, the line (and
// column) of the token at fault: "line 5 column 2: did not find expected
// key". Other errors are returned with the prefix removed only.
func Error(src []byte, err error) error {
	if err == nil {
		return nil
	}
	text := strings.TrimPrefix(err.Error(), "yaml: ")
	msg := lineMsg.FindStringSubmatch(text)[1]
	isParser := false
	for _, p := range parserErrors {
		if msg == p {
			isParser = true
			break
		}
	}
	if !isParser {
		return errors.New(text)
	}
	line, col, ok := Position(src)
	if !ok {
		// The other parser sees no error: say what yaml/v3 says, without
		// its line.
		return errors.New(msg)
	}
	return fmt.Errorf("line %d column %d: %s", line, col, msg)
}

// Position returns the line and column (1-based) of the first syntax
// error in src, as goccy/go-yaml's parser finds it; ok is false when it
// finds none.
func Position(src []byte) (line, col int, ok bool) {
	_, err := parser.ParseBytes(src, 0)
	var se *goccy.SyntaxError
	if !errors.As(err, &se) || se.Token == nil || se.Token.Position == nil {
		return 0, 0, false
	}
	return se.Token.Position.Line, se.Token.Position.Column, true
}
