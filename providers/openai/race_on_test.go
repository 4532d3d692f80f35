//go:build race

package openai_test

// openStreams is how many streams the scale test holds open at once: the
// race detector allows 8128 goroutines alive at once, and each stream has
// several; .ci/run also runs the test without -race, at full size.
const openStreams = 1000
