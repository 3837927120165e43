//go:build !capturetoggle

package pooler

import "sync/atomic"

// captureToggle is false outside measurement builds (capturetoggle.go).
const captureToggle = false

var captureOff atomic.Bool
