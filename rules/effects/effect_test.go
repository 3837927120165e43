package effects

import (
	"strings"
	"testing"
)

func TestKindString(t *testing.T) {
	for k := SetParam; k <= BackendIdentity; k++ {
		if strings.HasPrefix(k.String(), "kind(") {
			t.Errorf("kind %d has no name", k)
		}
	}
	if Kind(200).String() != "kind(200)" {
		t.Error(Kind(200).String())
	}
}
