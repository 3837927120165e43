package extract

// rbHeredoc is a heredoc whose marker has been seen and whose body starts
// on the next line.
type rbHeredoc struct {
	id             string
	squiggly, dash bool
	double         bool // escapes and interpolation are processed
	tok            int  // index of the token in lexer.toks, or -1
}

// heredocStart recognises a heredoc marker at src[i] ("<<"). The body is
// read at the end of the line; the token is emitted now so concatenation
// sees it in source order.
func (r *rbLexer) heredocStart(i int) (int, bool) {
	src := r.src
	k := i + 2
	h := rbHeredoc{double: true, tok: -1}
	if k < len(src) && src[k] == '~' {
		h.squiggly = true
		k++
	} else if k < len(src) && src[k] == '-' {
		h.dash = true
		k++
	}
	if k >= len(src) {
		return 0, false
	}
	emit := true
	var end int
	switch q := src[k]; {
	case q == '\'' || q == '"' || q == '`':
		e := k + 1
		for e < len(src) && src[e] != q && src[e] != '\n' {
			e++
		}
		if e >= len(src) || src[e] != q || e == k+1 {
			return 0, false
		}
		h.id = string(src[k+1 : e])
		h.double = q != '\''
		emit = q != '`'
		end = e + 1
	case isIdentStart(q):
		if !h.squiggly && !h.dash && !(r.valueOK || r.lastIdent && i > 0 && (src[i-1] == ' ' || src[i-1] == '\t')) {
			return 0, false
		}
		if !h.squiggly && !h.dash && !(q >= 'A' && q <= 'Z') {
			return 0, false
		}
		e := k + 1
		for e < len(src) && isIdentChar(src[e]) {
			e++
		}
		h.id = string(src[k:e])
		end = e
	default:
		return 0, false
	}
	if emit && r.emit {
		h.tok = r.addString(Literal{Start: i, End: end})
	} else {
		r.add(tokOther, i, end)
	}
	r.pending = append(r.pending, h)
	return end, true
}

// heredocBodies reads the bodies of the pending heredocs, one after the
// other, from i (the start of the line after their markers).
func (r *rbLexer) heredocBodies(i int) int {
	pending := r.pending
	r.pending = nil
	for n, h := range pending {
		var ok bool
		i, ok = r.heredocBody(h, i)
		if !ok {
			for _, d := range pending[n:] {
				r.dropHeredoc(d)
			}
			return len(r.src)
		}
	}
	return i
}

func (r *rbLexer) heredocBody(h rbHeredoc, i int) (int, bool) {
	src := r.src
	bodyEnd, termEnd, next := -1, 0, 0
	for ls := i; ls < len(src); {
		le := lineEnd(src, ls)
		te := le
		if te > ls && src[te-1] == '\r' {
			te--
		}
		k := ls
		if h.squiggly || h.dash {
			for k < te && (src[k] == ' ' || src[k] == '\t') {
				k++
			}
		}
		if string(src[k:te]) == h.id {
			bodyEnd, termEnd, next = ls, te, le+1
			break
		}
		ls = le + 1
	}
	if bodyEnd < 0 {
		return len(src), false
	}
	if next > len(src) {
		next = len(src)
	}
	if h.tok < 0 {
		return next, true
	}
	indent := -1
	if h.squiggly {
		for ls := i; ls < bodyEnd; ls = lineEnd(src, ls) + 1 {
			w, k := 0, ls
			for ; k < bodyEnd && (src[k] == ' ' || src[k] == '\t'); k++ {
				w = rbIndentWidth(w, src[k])
			}
			if k < bodyEnd && src[k] != '\n' && src[k] != '\r' && (indent < 0 || w < indent) {
				indent = w
			}
		}
	}
	b := newBuilder()
	dedented := -1
	for j := i; j < bodyEnd; {
		if indent > 0 && j != dedented && (j == i || src[j-1] == '\n') {
			dedented = j
			w := 0
			for j < bodyEnd && (src[j] == ' ' || src[j] == '\t') {
				nw := rbIndentWidth(w, src[j])
				if nw > indent {
					break
				}
				w = nw
				j++
			}
			b.skip()
			continue
		}
		c := src[j]
		switch {
		case h.double && c == '\\':
			j = rbEscape(&b, src, j)
		case h.double && c == '#':
			end, ok := r.interpolation(j)
			if !ok {
				end = j
			}
			j, _ = b.interpolation(src, j, min(end, bodyEnd))
		default:
			k := j + 1
			for k < bodyEnd && src[k-1] != '\n' && src[k] != '\\' && src[k] != '#' {
				k++
			}
			b.verbatim(src, j, k)
			j = k
		}
	}
	l := b.literal(r.toks[h.tok].start, termEnd)
	r.pieces[r.toks[h.tok].lit] = l
	r.toks[h.tok].end = termEnd
	return next, true
}

func rbIndentWidth(w int, c byte) int {
	if c == '\t' {
		return (w/8 + 1) * 8
	}
	return w + 1
}
