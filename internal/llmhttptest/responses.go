package llmhttptest

import (
	"fmt"
	"strings"
)

// Responses scripts a stream of OpenAI's Responses API: events of one
// response, numbered in order by their sequence_number, which a test
// serves whole, cut mid-stream, or from a sequence number on, as a
// background response resumed with starting_after is.
type Responses struct {
	ID     string
	events []string
}

// NewResponses returns a script for the response id.
func NewResponses(id string) *Responses { return &Responses{ID: id} }

// Event adds an event of type typ with the next sequence number; fields
// are more JSON members, such as `"delta":"Hel"`. The lifecycle events
// (response.created, response.in_progress, response.completed,
// response.incomplete, response.failed) get a response object of the
// script's id with the given status, and fields are added to that object.
func (r *Responses) Event(typ, fields string) *Responses {
	seq := len(r.events)
	var body string
	switch typ {
	case "response.created", "response.in_progress", "response.completed", "response.incomplete", "response.failed":
		status := strings.TrimPrefix(typ, "response.")
		if status == "created" {
			status = "in_progress"
		}
		resp := fmt.Sprintf(`"id":%q,"object":"response","status":%q,"model":"gpt-test","output":[]`, r.ID, status)
		if fields != "" {
			resp += "," + fields
		}
		body = fmt.Sprintf(`{"type":%q,"sequence_number":%d,"response":{%s}}`, typ, seq, resp)
	default:
		if fields != "" {
			fields = "," + fields
		}
		body = fmt.Sprintf(`{"type":%q,"sequence_number":%d%s}`, typ, seq, fields)
	}
	r.events = append(r.events, fmt.Sprintf("event: %s\ndata: %s", typ, body))
	return r
}

// Stream returns a reply streaming the events before number upTo (all of
// them when upTo is negative); when breakWith is not nil, the connection
// then dies with it.
func (r *Responses) Stream(upTo int, breakWith error) Reply {
	if upTo < 0 || upTo > len(r.events) {
		upTo = len(r.events)
	}
	reply := SSE(r.events[:upTo]...)
	reply.BreakAfter = breakWith
	return reply
}

// After returns a reply streaming the events after sequence number seq:
// what GET /responses/{id}?stream=true&starting_after=seq answers.
func (r *Responses) After(seq int) Reply {
	return SSE(r.events[min(seq+1, len(r.events)):]...)
}
