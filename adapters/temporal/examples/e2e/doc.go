// Package e2e tests the temporal adapter against a real Temporal server
// run inside go test (go.temporal.io/server/temporaltest), with workers in
// other processes that are killed mid-stream. It is a package of tests
// only; it lives in the examples module so that the server, a large
// dependency, stays out of what a user of the adapter downloads.
package e2e
