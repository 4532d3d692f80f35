// Package examples holds the temporal adapter's example, the news
// pipeline as Temporal workflows (./pipeline), and its end-to-end tests
// against a real Temporal server run inside go test (./e2e). It is a
// module of its own so that the Temporal server, a large dependency,
// stays out of what a user of the adapter downloads.
package examples
