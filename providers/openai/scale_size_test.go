package openai_test

import (
	"os"
	"strconv"
)

// openStreams is how many streams the scale test holds open at once:
// STEADFAST_SCALE_STREAMS when set (.ci/run sets 50 000, without -race),
// else 1000, which the race detector's 8128 goroutines alive at once
// allow.
var openStreams = func() int {
	if n, err := strconv.Atoi(os.Getenv("STEADFAST_SCALE_STREAMS")); err == nil && n > 0 {
		return n
	}
	return 1000
}()
