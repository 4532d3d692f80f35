package chaos_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/steadfast-go/steadfast/chaos"
)

// canned answers every request with the same response, allocating
// nothing: what the Transport adds shows alone.
type canned struct{ resp *http.Response }

func (c canned) RoundTrip(*http.Request) (*http.Response, error) { return c.resp, nil }

// quiet is a Transport with faults of each kind of trigger, none of which
// fires: what a staging deployment with chaos switched off pays.
func quiet(base http.RoundTripper) http.RoundTripper {
	never := func(context.Context) bool { return false }
	return chaos.Transport(base,
		chaos.RateLimited(0).When(never),
		chaos.Overloaded().Rate(0, 1),
		chaos.StreamBroken(40).When(never).First(1),
		chaos.StreamStalled(40).Rate(0, 2))
}

// streamed is a base answering a stream, so that the stream faults are
// asked too.
func streamed() canned {
	return canned{&http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"text/event-stream"}}, Body: http.NoBody}}
}

// BenchmarkTransport compares a request through a base RoundTripper with
// one through a Transport over it whose faults do not fire.
//
//	go test -run '^$' -bench Transport -count 10 ./chaos | benchstat -
func BenchmarkTransport(b *testing.B) {
	req, _ := http.NewRequestWithContext(context.Background(), http.MethodPost, "https://api.openai.com/v1/responses", nil)
	base := streamed()
	for _, bc := range []struct {
		name string
		rt   http.RoundTripper
	}{{"base", base}, {"chaos-quiet", quiet(base)}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := bc.rt.RoundTrip(req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// A request no fault fires for allocates nothing in the Transport.
func TestTransportAllocatesNothingWhenQuiet(t *testing.T) {
	req, _ := http.NewRequestWithContext(context.Background(), http.MethodPost, "https://api.openai.com/v1/responses", nil)
	rt := quiet(streamed())
	if n := testing.AllocsPerRun(1000, func() { _, _ = rt.RoundTrip(req) }); n != 0 {
		t.Errorf("%v allocations per request with no fault firing, want 0", n)
	}
}
