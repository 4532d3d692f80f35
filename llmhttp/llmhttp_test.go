package llmhttp

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/goleak"

	"github.com/steadfast-go/steadfast/internal/usage"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	cases := []struct {
		header map[string]string
		want   time.Duration
		ok     bool
	}{
		{map[string]string{"retry-after-ms": "200"}, 200 * time.Millisecond, true},
		{map[string]string{"retry-after-ms": "12.5"}, 12500 * time.Microsecond, true},
		{map[string]string{"retry-after-ms": "150", "Retry-After": "3"}, 150 * time.Millisecond, true},
		{map[string]string{"Retry-After": "3"}, 3 * time.Second, true},
		{map[string]string{"Retry-After": "0.25"}, 250 * time.Millisecond, true},
		{map[string]string{"Retry-After": now.Add(90 * time.Second).Format(http.TimeFormat)}, 90 * time.Second, true},
		{map[string]string{"Retry-After": now.Add(-time.Minute).Format(http.TimeFormat)}, 0, true},
		{map[string]string{"retry-after-ms": "-5", "Retry-After": "2"}, 2 * time.Second, true},
		{map[string]string{"Retry-After": "NaN"}, 0, false},
		{map[string]string{"Retry-After": "soon"}, 0, false},
		{map[string]string{"Retry-After": "1e400"}, 0, false},
		{map[string]string{"Retry-After": "1e30"}, time.Duration(1<<63 - 1), true},
		{nil, 0, false},
	}
	for _, tc := range cases {
		h := http.Header{}
		for k, v := range tc.header {
			h.Set(k, v)
		}
		got, ok := retryAfter(h, now)
		if got != tc.want || ok != tc.ok {
			t.Errorf("RetryAfter(%v) = %v, %v, want %v, %v", tc.header, got, ok, tc.want, tc.ok)
		}
	}
}

func TestShouldRetry(t *testing.T) {
	for v, want := range map[string][2]bool{"true": {true, true}, "false": {false, true}, "": {false, false}, "maybe": {false, false}} {
		h := http.Header{}
		if v != "" {
			h.Set("x-should-retry", v)
		}
		if r, ok := shouldRetry(h); r != want[0] || ok != want[1] {
			t.Errorf("ShouldRetry(%q) = %v, %v, want %v, %v", v, r, ok, want[0], want[1])
		}
	}
}

func TestVerdictUnwraps(t *testing.T) {
	sdk := errors.New("sdk error")
	err := Classify(&APIError{Status: 429, Code: "insufficient_quota", Err: sdk, Dead: true}, nil, "")
	if v, ok := errors.AsType[interface {
		error
		Retryable() bool
	}](err); !ok || v.Retryable() {
		t.Error("a dead key's error: want the verdict Retryable() false")
	}
	if !errors.Is(err, sdk) {
		t.Error("errors.Is(verdict, sdk error) = false")
	}
	if ae, ok := errors.AsType[*APIError](err); !ok || ae.StatusCode() != 429 || ae.ErrorType() != "insufficient_quota" {
		t.Errorf("errors.As(*APIError) = %v, %v", ae, ok)
	}
}

// fakeStream yields its events, then its error.
type fakeStream struct {
	events []string
	i      int
	err    error
	closed bool
}

func (f *fakeStream) Next() bool {
	if f.i >= len(f.events) {
		return false
	}
	f.i++
	return true
}
func (f *fakeStream) Current() string { return f.events[f.i-1] }
func (f *fakeStream) Err() error      { return f.err }
func (f *fakeStream) Close() error    { f.closed = true; return nil }

// Events before the first with content are held back and delivered with
// it; after it, every event is delivered as it came, then the adapted
// failure.
func TestPump(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		boom := errors.New("boom")
		s := &fakeStream{events: []string{"", "", "a", "", "b"}, err: boom}
		wrapped := errors.New("adapted")
		var observed, done int
		ch := Pump[string](t.Context(), s, PumpConfig[string]{
			Content: func(e string) bool { return e != "" },
			Adapt:   func(error) error { return wrapped },
			Observe: func(string) { observed++ },
			Done:    func() { done++ },
		})
		var got []any
		for v := range ch {
			got = append(got, v)
		}
		if want := []any{"", "", "a", "", "b", wrapped}; !slices.Equal(got, want) {
			t.Errorf("values = %q, want %q", got, want)
		}
		if observed != 5 || done != 1 {
			t.Errorf("observed %d events, done %d times, want 5 and 1", observed, done)
		}
		synctest.Wait()
		if !s.closed {
			t.Error("the SDK stream was not closed")
		}
	})
}

// A stream that fails before any content delivers only its error: nothing
// a retry layer would commit on.
func TestPumpHoldsContentFreeEventsOfAFailedStream(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		boom := errors.New("boom")
		s := &fakeStream{events: []string{"", ""}, err: boom}
		ch := Pump[string](t.Context(), s, PumpConfig[string]{
			Content: func(e string) bool { return e != "" },
			Adapt:   func(err error) error { return err },
		})
		var got []any
		for v := range ch {
			got = append(got, v)
		}
		if len(got) != 1 || got[0] != boom {
			t.Errorf("values = %q, want only the failure", got)
		}
	})
}

// What a failed stream cost is recorded (Done) before its failure is
// delivered: a retry layer that reads the failure counts those tokens
// with the attempt they belong to.
func TestPumpRecordsBeforeTheFailure(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := usage.New(nil)
		ctx := context.WithValue(t.Context(), usage.Key{}, m)
		s := &fakeStream{events: []string{""}, err: errors.New("connection reset")}
		ch := Pump[string](ctx, s, PumpConfig[string]{
			Content: func(e string) bool { return e != "" },
			Adapt:   func(err error) error { return err },
			Done: func() {
				time.Sleep(time.Second) // a slow record: the failure waits for it
				(&Response{HasUsage: true, InputTokens: 12}).Record(ctx)
			},
		})
		if v := <-ch; v == nil {
			t.Fatal("no failure delivered")
		}
		if in, _, _, _ := m.Totals(); in != 12 {
			t.Errorf("when the failure came, %d input tokens were recorded, want 12", in)
		}
		for range ch {
		}
	})
}

func TestPumpStopsOnCancel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		s := &fakeStream{events: []string{"a", "b", "c"}}
		ch := Pump[string](ctx, s, PumpConfig[string]{
			Content: func(e string) bool { return e != "" },
			Adapt:   func(err error) error { return err },
		})
		<-ch
		cancel()
		synctest.Wait()
		if !s.closed {
			t.Error("the SDK stream was not closed after cancel")
		}
	})
}

func TestAPIErrorNamesItsCode(t *testing.T) {
	sdk := errors.New("POST \"/v1/chat/completions\": 400 Bad Request")
	for _, tc := range []struct {
		err  *APIError
		want string
	}{
		{&APIError{Status: 400, Code: "context_length_exceeded", Err: sdk}, `POST "/v1/chat/completions": 400 Bad Request (context_length_exceeded)`},
		{&APIError{Status: 400, Err: sdk}, `POST "/v1/chat/completions": 400 Bad Request`},
		{&APIError{Status: 400, Code: "Bad Request", Err: sdk}, `POST "/v1/chat/completions": 400 Bad Request`},
	} {
		if got := tc.err.Error(); got != tc.want {
			t.Errorf("Error() = %q, want %q", got, tc.want)
		}
	}
}
