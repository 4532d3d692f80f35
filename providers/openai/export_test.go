package openai

import "time"

// SetPolls sets the background polls' first and longest waits for a test,
// and returns what sets them back.
func SetPolls(first, most time.Duration) (restore func()) {
	f, m := pollFirst, pollMax
	pollFirst, pollMax = first, most
	return func() { pollFirst, pollMax = f, m }
}
