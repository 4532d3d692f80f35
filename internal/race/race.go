//go:build !race

// Package race reports whether the race detector is on: it caps the
// goroutines alive at once at 8128, which tests at scale must respect.
package race

// Enabled reports whether the binary was built with -race.
const Enabled = false
