//go:build !race

package deadline

const raceEnabled = false
