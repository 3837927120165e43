package output

import (
	"fmt"
	"io"
	"os"

	"github.com/fatih/color"
	"github.com/mattn/go-isatty"
)

// UseColor decides whether the text output to out is coloured, from the
// --color mode:
//
//   - "always": colour, whatever out is and even when NO_COLOR is set (an
//     explicit request wins over the environment);
//   - "never": no colour;
//   - "auto": colour only when out is an *os.File connected to a terminal,
//     NO_COLOR is unset or empty (https://no-color.org) and TERM is not
//     "dumb".
//
// Any other mode is an error. getenv reads the environment (os.Getenv, or a
// fake in tests).
func UseColor(mode string, out io.Writer, getenv func(string) string) (bool, error) {
	switch mode {
	case "always":
		return true, nil
	case "never":
		return false, nil
	case "auto":
		if getenv("NO_COLOR") != "" || getenv("TERM") == "dumb" {
			return false, nil
		}
		f, ok := out.(*os.File)
		if !ok || f == nil {
			return false, nil
		}
		fd := f.Fd()
		return isatty.IsTerminal(fd) || isatty.IsCygwinTerminal(fd), nil
	}
	return false, fmt.Errorf("invalid color mode %q (want auto, always or never)", mode)
}

// palette holds the colours of one rendering. Each colour is switched on or
// off explicitly, because fatih/color otherwise decides from the process's
// stdout, not from the writer the report goes to.
type palette struct {
	path     *color.Color
	severity map[string]*color.Color
}

// newPalette returns the colours for one rendering, enabled or not.
func newPalette(on bool) *palette {
	p := &palette{
		path: color.New(color.Bold),
		severity: map[string]*color.Color{
			"critical": color.New(color.FgMagenta, color.Bold),
			"error":    color.New(color.FgRed, color.Bold),
			"warning":  color.New(color.FgYellow),
			"info":     color.New(color.FgCyan),
		},
	}
	all := []*color.Color{p.path}
	for _, c := range p.severity {
		all = append(all, c)
	}
	for _, c := range all {
		if on {
			c.EnableColor()
		} else {
			c.DisableColor()
		}
	}
	return p
}

// sev colours a severity name; unknown names stay plain.
func (p *palette) sev(name string) string {
	if c, ok := p.severity[name]; ok {
		return c.Sprint(name)
	}
	return name
}
