//go:build !race

package openai_test

// openStreams is how many streams the scale test holds open at once.
const openStreams = 50_000
