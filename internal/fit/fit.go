// Package fit works out the output limit that makes a request fit what a
// provider said of its overflow: the one rule the providers' ready repairs
// share.
package fit

import "github.com/steadfast-go/steadfast/llmhttp"

// Output returns the output limit that makes a request which asked for
// o.Output tokens (or, when the message did not say, current) fit o.Limit:
// the output less what the request went over by. ok is false when nothing
// fits: the input alone fills the limit, no output is left, or the output
// asked for is unknown (current 0).
func Output(o llmhttp.Overflow, current int) (n int, ok bool) {
	asked := o.Output
	if asked == 0 {
		asked = current
	}
	if asked <= 0 || o.Input >= o.Limit {
		return 0, false
	}
	n = asked - (o.Requested - o.Limit)
	return n, n > 0
}
