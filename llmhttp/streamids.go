package llmhttp

import "github.com/steadfast-go/steadfast/internal/recent"

// StreamIDs remembers, for an adapter whose streams can resume, the id the
// provider gave each stream (a background response's id), by the logical
// call it belongs to: the InvocationID of retry.AttemptFromContext, which
// a Resume of the same call carries. It keeps the last 4096 calls. Its
// zero value is ready; it is safe for concurrent use.
type StreamIDs struct{ m recent.Map[string] }

// Set remembers that call's stream has the provider's id.
func (s *StreamIDs) Set(call, id string) { s.m.Set(call, id) }

// Get returns the provider's id of call's stream, "" when it is not known.
func (s *StreamIDs) Get(call string) string {
	id, _ := s.m.Get(call)
	return id
}
