// Package version holds steadfast's version, and gives every package of
// steadfast its OpenTelemetry tracer and meter at that version.
package version

// Version is steadfast's version.
const Version = "1.0.0-rc.1"
