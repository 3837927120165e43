package sqlparse

import (
	"sort"
	"unicode/utf8"
)

// Position is a 1-based line and column. Columns count characters (Unicode
// code points), so a tab or a multibyte character is one column.
type Position struct {
	Line, Column int
}

// LineIndex maps byte offsets of one text to positions. Lines end at "\n",
// "\r\n" or a lone "\r"; the terminator is not part of the line.
type LineIndex struct {
	src    []byte
	starts []int // byte offset where each line starts
}

// NewLineIndex indexes src. It keeps a reference to src.
func NewLineIndex(src []byte) *LineIndex {
	starts := []int{0}
	for i := 0; i < len(src); i++ {
		switch src[i] {
		case '\n':
			starts = append(starts, i+1)
		case '\r':
			if i+1 < len(src) && src[i+1] == '\n' {
				i++
			}
			starts = append(starts, i+1)
		}
	}
	return &LineIndex{src: src, starts: starts}
}

// Lines returns the number of lines.
func (x *LineIndex) Lines() int { return len(x.starts) }

// Position returns the position of byte offset off. Offsets past the end map
// to the end of the text; an offset inside a multibyte character maps to
// that character.
func (x *LineIndex) Position(off int) Position {
	if off < 0 {
		off = 0
	}
	if off > len(x.src) {
		off = len(x.src)
	}
	line := sort.Search(len(x.starts), func(i int) bool { return x.starts[i] > off }) - 1
	start := x.starts[line]
	if start == 0 && off >= 3 && len(x.src) >= 3 && x.src[0] == 0xEF && x.src[1] == 0xBB && x.src[2] == 0xBF {
		start = 3 // a byte order mark is not a column
	}
	col := 1
	for i := start; i < off; {
		_, size := utf8.DecodeRune(x.src[i:])
		if i+size > off {
			break
		}
		i += size
		col++
	}
	return Position{Line: line + 1, Column: col}
}

// LineText returns the text of 1-based line n without its terminator.
func (x *LineIndex) LineText(n int) string {
	if n < 1 || n > len(x.starts) {
		return ""
	}
	start := x.starts[n-1]
	end := len(x.src)
	if n < len(x.starts) {
		end = x.starts[n]
	}
	for end > start && (x.src[end-1] == '\n' || x.src[end-1] == '\r') {
		end--
	}
	return string(x.src[start:end])
}

// LineStart returns the byte offset where 1-based line n starts.
func (x *LineIndex) LineStart(n int) int {
	if n < 1 {
		return 0
	}
	if n > len(x.starts) {
		return len(x.src)
	}
	return x.starts[n-1]
}
