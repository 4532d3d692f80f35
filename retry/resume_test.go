package retry_test

import (
	"context"
	"errors"
	"io"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/internal/mock"
	"github.com/steadfast-go/steadfast/internal/streams"
	"github.com/steadfast-go/steadfast/retry"
)

// chunks returns the ints 1 to n, as a Resumable streams them.
func chunks(n int) []any {
	out := make([]any, n)
	for i := range out {
		out[i] = i + 1
	}
	return out
}

// faults gives every input the same faults.
func faults(fs ...mock.Fault) func(any) []mock.Fault {
	return func(any) []mock.Fault { return fs }
}

// split returns a stream's chunks and its error value, if any.
func split(t *testing.T, got []any) ([]any, error) {
	t.Helper()
	if n := len(got); n > 0 {
		if err, ok := got[n-1].(error); ok {
			return got[:n-1], err
		}
	}
	return got, nil
}

func streamConfig() retry.RetryConfig {
	cfg := testConfig()
	cfg.ChunkTimeout = 5 * time.Second
	return cfg
}

func resumingConfig() retry.RetryConfig {
	cfg := streamConfig()
	cfg.ResumeStreams = true
	return cfg
}

// streamAll streams through a RetryRunnable over inner and returns the
// chunks and the error value the consumer got.
func streamAll(t *testing.T, inner core.Runnable, cfg retry.RetryConfig, opts ...retry.Option) ([]any, error) {
	t.Helper()
	ch, err := newRetry(t, inner, cfg, opts...).Stream(t.Context(), "q")
	if err != nil {
		t.Fatal(err)
	}
	return split(t, mock.Drain(ch))
}

// A stall after any chunk ends the stream at once with ErrStreamStalled
// as the last value, and its producer's context is cancelled with that
// cause: nothing hangs after the commit.
func TestStallAtEachPosition(t *testing.T) {
	const n = 4
	for k := 1; k < n; k++ {
		synctest.Test(t, func(t *testing.T) {
			inner := mock.NewResumable(n, time.Second, faults(mock.Fault{After: k, Kind: mock.Stall}))
			rec := newRecorder()
			r := newRetry(t, inner, streamConfig(), rec.options()...)
			start := time.Now()
			ch, err := r.Stream(t.Context(), "q")
			if err != nil {
				t.Fatal(err)
			}
			got, last := split(t, mock.Drain(ch))
			if !slices.Equal(got, chunks(k)) || !errors.Is(last, retry.ErrStreamStalled) {
				t.Fatalf("stall after %d: stream = %v, %v; want %v then ErrStreamStalled", k, got, last, chunks(k))
			}
			if want := time.Duration(k-1)*time.Second + 5*time.Second; time.Since(start) != want {
				t.Errorf("stall after %d: ended after %v, want %v", k, time.Since(start), want)
			}
			synctest.Wait() // the producer saw its cancellation and ended
			call := rec.one(t, "retry.stream")
			wantAttrs(t, "call span", call.Attributes(), map[string]string{
				"retry.outcome": "silent_timeout", "retry.attempts": "1", "error.type": "stream_stalled",
				"retry.stream.chunks": itoa(k)})
		})
	}
	// Before the first chunk, FirstChunkTimeout (not ChunkTimeout) governs:
	// the attempt is retried.
	synctest.Test(t, func(t *testing.T) {
		cfg := streamConfig()
		cfg.FirstChunkTimeout = time.Second
		inner := mock.NewResumable(n, time.Second, faults(mock.Fault{After: 0, Kind: mock.Stall}))
		ch, err := newRetry(t, inner, cfg).Stream(t.Context(), "q")
		if err != nil {
			t.Fatal(err)
		}
		if got := mock.Drain(ch); !slices.Equal(got, chunks(n)) {
			t.Errorf("stall before the first chunk: stream = %v, want %v after a retry", got, chunks(n))
		}
	})
}

func itoa(i int) string { return string(rune('0' + i)) }

// With ResumeStreams, a failure after the commit is resumed: the consumer
// gets every chunk once, in order, and the call succeeds.
func TestResumeAfterFailure(t *testing.T) {
	for _, tc := range []struct {
		name  string
		fault mock.Fault
	}{
		{"error value", mock.Fault{After: 2, Kind: mock.ErrorValue, Err: &mock.HTTPError{Code: 503}}},
		{"stall", mock.Fault{After: 2, Kind: mock.Stall}},
		{"dropped connection", mock.Fault{After: 2, Kind: mock.Drop}},
	} {
		synctest.Test(t, func(t *testing.T) {
			inner := mock.NewResumable(5, time.Second, faults(tc.fault))
			rec := newRecorder()
			cfg := streamConfig()
			cfg.ResumeStreams = true
			ch, err := newRetry(t, inner, cfg, rec.options()...).Stream(t.Context(), "q")
			if err != nil {
				t.Fatal(err)
			}
			if got := mock.Drain(ch); !slices.Equal(got, chunks(5)) {
				t.Fatalf("%s: stream = %v, want %v once each", tc.name, got, chunks(5))
			}
			if streams, resumes := inner.Counts(); streams != 1 || resumes != 1 {
				t.Errorf("%s: streams, resumes = %d, %d, want 1, 1", tc.name, streams, resumes)
			}
			wantAttrs(t, "call span", rec.one(t, "retry.stream").Attributes(), map[string]string{
				"retry.outcome": "success", "retry.attempts": "2", "retry.stream.chunks": "5"})
			attempts := rec.ended("retry.attempt")
			if len(attempts) != 2 {
				t.Fatalf("%s: attempt spans = %d, want 2", tc.name, len(attempts))
			}
			wantAttrs(t, "resumed attempt", attempts[1].Attributes(), map[string]string{
				"retry.attempt": "2", "retry.stream.resumed": "true"})
			wantAttrs(t, "broken attempt", attempts[0].Attributes(), map[string]string{
				"retry.attempt": "1", "retry.retryable": "true", "retry.backoff.source": "computed"}, "retry.stream.resumed")
		})
	}
}

// Resuming stays within MaxRetries, and gives up with outcome committed
// and the attempts made; the last value is the *Error.
func TestResumeGivesUpWithinMaxRetries(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		drop := func(after int) mock.Fault { return mock.Fault{After: after, Kind: mock.Drop} }
		inner := mock.NewResumable(9, 0, faults(drop(1), drop(2), drop(3), drop(4), drop(5)))
		cfg := resumingConfig()
		cfg.MaxRetries = 2
		got, last := streamAll(t, inner, cfg)
		if !slices.Equal(got, chunks(3)) || !errors.Is(last, io.ErrUnexpectedEOF) {
			t.Fatalf("stream = %v, %v, want 1 2 3 then the last drop", got, last)
		}
		wantOutcome(t, last, retry.OutcomeCommitted, 3)
	})
}

func TestResumeRefusedByTheBudget(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		inner := mock.NewResumable(4, 0, faults(mock.Fault{After: 2, Kind: mock.Drop}))
		budget := &countingBudget{allow: false}
		got, last := streamAll(t, inner, resumingConfig(), retry.WithBudget(budget))
		if !slices.Equal(got, chunks(2)) {
			t.Errorf("chunks = %v, want 1 2", got)
		}
		wantOutcome(t, last, retry.OutcomeCommitted, 1)
		if _, resumes := inner.Counts(); resumes != 0 || budget.asked != 1 {
			t.Errorf("resumes = %d, budget asked %d times; want 0 and 1", resumes, budget.asked)
		}
	})
}

func TestNonRetryableFailureAfterCommitIsNotResumed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		bad := &mock.HTTPError{Code: 400}
		inner := mock.NewResumable(4, 0, faults(mock.Fault{After: 1, Kind: mock.ErrorValue, Err: bad}))
		got, last := streamAll(t, inner, resumingConfig())
		if !slices.Equal(got, chunks(1)) || !errors.Is(last, bad) {
			t.Errorf("stream = %v, %v, want 1 then the 400", got, last)
		}
		wantOutcome(t, last, retry.OutcomeCommitted, 1)
		if _, resumes := inner.Counts(); resumes != 0 {
			t.Errorf("resumes = %d, want 0", resumes)
		}
	})
}

// Without ResumeStreams, §3 holds: an error value after the commit is the
// last value, as it came.
func TestWithoutResumeStreamsNothingAfterTheCommitIsRetried(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		inner := mock.NewResumable(4, 0, faults(mock.Fault{After: 2, Kind: mock.Drop}))
		got, last := streamAll(t, inner, streamConfig())
		if !slices.Equal(got, chunks(2)) || last != io.ErrUnexpectedEOF {
			t.Errorf("stream = %v, %v, want 1 2 then io.ErrUnexpectedEOF itself", got, last)
		}
		if _, resumes := inner.Counts(); resumes != 0 {
			t.Errorf("resumes = %d, want 0", resumes)
		}
	})
}

// A Resume that answers streams.ErrNotResumable ends resuming at once.
func TestNotResumableEndsResuming(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		inner := notResumable{mock.NewResumable(4, 0, faults(mock.Fault{After: 2, Kind: mock.Drop}))}
		got, last := streamAll(t, inner, resumingConfig())
		if !slices.Equal(got, chunks(2)) || !errors.Is(last, streams.ErrNotResumable) {
			t.Errorf("stream = %v, %v, want 1 2 then streams.ErrNotResumable", got, last)
		}
		wantOutcome(t, last, retry.OutcomeCommitted, 2)
	})
}

// notResumable streams as its Resumable does, and refuses every Resume.
type notResumable struct{ *mock.Resumable }

func (notResumable) Resume(context.Context, any, any, ...core.Option) (<-chan any, error) {
	return nil, streams.ErrNotResumable
}

// RetryRunnable is a Resumer itself, and answers streams.ErrNotResumable
// when its inner Runnable is not one.
func TestRetryRunnableResume(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRetry(t, mock.NewResumable(5, 0, nil), streamConfig())
		ch, err := r.Resume(t.Context(), "q", 3)
		if err != nil {
			t.Fatal(err)
		}
		if got := mock.Drain(ch); !slices.Equal(got, []any{4, 5}) {
			t.Errorf("Resume(after 3) = %v, want 4 5", got)
		}
		_, err = newRetry(t, mock.New(), streamConfig()).Resume(t.Context(), "q", 3)
		if !errors.Is(err, streams.ErrNotResumable) {
			t.Errorf("Resume of a Runnable that cannot = %v, want streams.ErrNotResumable", err)
		}
	})
}

// The consumer walks away during a resume's backoff: the stream ends at
// once, and nothing is left running (goleak checks at exit).
func TestConsumerCancelsDuringResumeBackoff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		inner := mock.NewResumable(4, 0, faults(mock.Fault{After: 2, Kind: mock.Drop}))
		cfg := streamConfig()
		cfg.ResumeStreams = true
		ctx, cancel := context.WithCancel(t.Context())
		ch, err := newRetry(t, inner, cfg).Stream(ctx, "q")
		if err != nil {
			t.Fatal(err)
		}
		<-ch
		<-ch
		time.AfterFunc(500*time.Millisecond, cancel) // within the 1s backoff
		start := time.Now()
		for range ch {
		}
		if time.Since(start) != 500*time.Millisecond {
			t.Errorf("stream ended %v after the second chunk, want 500ms", time.Since(start))
		}
		if _, resumes := inner.Counts(); resumes != 0 {
			t.Errorf("resumes = %d, want 0", resumes)
		}
		synctest.Wait()
	})
}

// A Resume that panics, on the forwarding goroutine, ends the stream with
// an *Error wrapping a *core.PanicError as the last value.
func TestResumePanicIsTheLastValue(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		inner := panickyResume{mock.NewResumable(4, 0, faults(mock.Fault{After: 1, Kind: mock.Drop}))}
		got, last := streamAll(t, inner, resumingConfig())
		pe, ok := errors.AsType[*core.PanicError](last)
		if !slices.Equal(got, chunks(1)) || !ok || pe.Value != "resume" {
			t.Errorf("stream = %v, %v, want 1 then a *core.PanicError", got, last)
		}
		wantOutcome(t, last, retry.OutcomeCommitted, 2)
	})
}

type panickyResume struct{ *mock.Resumable }

func (panickyResume) Resume(context.Context, any, any, ...core.Option) (<-chan any, error) {
	panic("resume")
}

func TestValidateChunkTimeout(t *testing.T) {
	err := retry.RetryConfig{ChunkTimeout: -time.Second}.Validate()
	if ce, ok := errors.AsType[*retry.ConfigError](err); !ok || ce.Field != "ChunkTimeout" {
		t.Errorf("Validate(ChunkTimeout -1s) = %v, want a *ConfigError naming ChunkTimeout", err)
	}
}

func TestPolicyJSONHasTheStreamFields(t *testing.T) {
	var cfg retry.RetryConfig
	if err := cfg.UnmarshalJSON([]byte(`{"chunk_timeout": "30s", "resume_streams": true}`)); err != nil {
		t.Fatal(err)
	}
	if cfg.ChunkTimeout != 30*time.Second || !cfg.ResumeStreams {
		t.Errorf("UnmarshalJSON() = %+v, want ChunkTimeout 30s and ResumeStreams", cfg)
	}
	data, err := cfg.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	var back retry.RetryConfig
	if err := back.UnmarshalJSON(data); err != nil || back.ChunkTimeout != cfg.ChunkTimeout || !back.ResumeStreams {
		t.Errorf("round trip of %s = %+v, %v", data, back, err)
	}
}

// A resume whose backoff would pass the caller's deadline is not tried:
// the stream ends at once with outcome deadline.
func TestResumeNeverSleepsIntoTheDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		inner := mock.NewResumable(4, 0, faults(mock.Fault{After: 2, Kind: mock.Drop}))
		ctx, cancel := context.WithTimeout(t.Context(), 500*time.Millisecond) // the backoff is 1s
		defer cancel()
		ch, err := newRetry(t, inner, resumingConfig()).Stream(ctx, "q")
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		got, last := split(t, mock.Drain(ch))
		if !slices.Equal(got, chunks(2)) || time.Since(start) != 0 {
			t.Errorf("stream = %v after %v, want 1 2 at once", got, time.Since(start))
		}
		wantOutcome(t, last, retry.OutcomeDeadline, 1)
		if _, resumes := inner.Counts(); resumes != 0 {
			t.Errorf("resumes = %d, want 0", resumes)
		}
	})
}
