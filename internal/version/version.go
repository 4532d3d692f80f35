// Package version holds steadfast's version, which retry, ratelimit and
// breaker give their OpenTelemetry instrumentation scopes.
package version

// Version is steadfast's version.
const Version = "0.1.0-dev"
