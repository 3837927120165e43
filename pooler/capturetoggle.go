//go:build capturetoggle

package pooler

import (
	"os"
	"strconv"
	"sync/atomic"
	"time"
)

// A measurement build (go build -tags capturetoggle) turns the capture's
// per-message work off and on in alternating periods of
// PGPOOLCHECK_CAPTURE_TOGGLE seconds, aligned to the wall clock: off while
// the Unix time divided by the period is odd. Each client follows the
// switch between its round trips only, so that a round trip is recorded
// whole or not at all. scripts/record-toggle.sh compares the two kinds of
// period of one run: same process, same connections, same minutes of the
// machine. Release builds compile all of this away (captureToggle is false).
const captureToggle = true

var captureOff atomic.Bool

func init() {
	secs, err := strconv.Atoi(os.Getenv("PGPOOLCHECK_CAPTURE_TOGGLE"))
	if err != nil || secs <= 0 {
		return
	}
	period := time.Duration(secs) * time.Second
	go func() {
		for {
			k := time.Now().UnixNano() / int64(period)
			captureOff.Store(k%2 == 1)
			time.Sleep(time.Until(time.Unix(0, (k+1)*int64(period))))
		}
	}()
}
