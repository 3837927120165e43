package pooler

// fdTable maps the loop's descriptors to their connections: a slice
// indexed by descriptor, which the kernel keeps small and dense, and a map
// for the bridges' tokens (negative).
type fdTable[T any] struct {
	v       []*T
	bridged map[int32]*T
}

func (t *fdTable[T]) get(fd int32) *T {
	if fd >= 0 && int(fd) < len(t.v) {
		return t.v[fd]
	}
	if fd < 0 {
		return t.bridged[fd]
	}
	return nil
}

func (t *fdTable[T]) set(fd int32, x *T) {
	if fd < 0 {
		if t.bridged == nil {
			t.bridged = make(map[int32]*T)
		}
		t.bridged[fd] = x
		return
	}
	if int(fd) >= len(t.v) {
		t.v = append(t.v, make([]*T, int(fd)+1-len(t.v)+len(t.v)/2)...)
	}
	t.v[fd] = x
}

func (t *fdTable[T]) del(fd int32) {
	if fd >= 0 && int(fd) < len(t.v) {
		t.v[fd] = nil
	}
	if fd < 0 {
		delete(t.bridged, fd)
	}
}

// each calls f for every connection in the table.
func (t *fdTable[T]) each(f func(*T)) {
	for _, x := range t.v {
		if x != nil {
			f(x)
		}
	}
	for _, x := range t.bridged {
		f(x)
	}
}
