package streams

import "context"

// Send delivers v on ch and reports true, or reports false when ctx ends
// first. It is the select a Stream producer makes for every value, so that
// a consumer that cancels never leaves the producer blocked.
func Send(ctx context.Context, ch chan<- any, v any) bool {
	select {
	case ch <- v:
		return true
	case <-ctx.Done():
		return false
	}
}
