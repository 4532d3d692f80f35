package retry_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/fallback"
	"github.com/steadfast-go/steadfast/hedge"
	"github.com/steadfast-go/steadfast/internal/streams"
	"github.com/steadfast-go/steadfast/llmhttp"
	"github.com/steadfast-go/steadfast/retry"
)

// billed is one answer of a billing provider: the tokens the provider
// reports for it (none when unknown), and its output or failure.
type billed struct {
	in, out int64
	unknown bool
	output  any
	err     error
	// chunks, for a stream: what it yields before output or err.
	chunks []any
}

// biller is a provider that reports each answer's usage the way the
// providers' adapters do (llmhttp.Response.Record), then answers; the
// last answer repeats. Its Batch calls Invoke per item, as
// core.RunnableFunc's does.
type biller struct {
	mu      sync.Mutex
	answers []billed
	calls   int
}

func (b *biller) next() billed {
	b.mu.Lock()
	defer b.mu.Unlock()
	a := b.answers[min(b.calls, len(b.answers)-1)]
	b.calls++
	return a
}

func record(ctx context.Context, a billed) {
	r := llmhttp.Response{HasUsage: !a.unknown, InputTokens: a.in, OutputTokens: a.out}
	r.Record(ctx)
}

func (b *biller) Invoke(ctx context.Context, _ any, _ ...core.Option) (any, error) {
	a := b.next()
	record(ctx, a)
	return a.output, a.err
}

func (b *biller) Batch(ctx context.Context, in []any, opts ...core.Option) ([]any, error) {
	return core.RunnableFunc(b.Invoke).Batch(ctx, in, opts...)
}

func (b *biller) Stream(ctx context.Context, _ any, _ ...core.Option) (<-chan any, error) {
	a := b.next()
	ch := make(chan any)
	go func() {
		defer close(ch)
		for _, c := range a.chunks {
			if !streams.Send(ctx, ch, c) {
				return
			}
		}
		record(ctx, a) // as llmhttp.Pump does: what the stream cost, before its last value
		last := a.output
		if a.err != nil {
			last = a.err
		}
		if last != nil {
			streams.Send(ctx, ch, last)
		}
	}()
	return ch, nil
}

var (
	overloaded = &llmhttp.APIError{Status: 503, Err: errors.New("503 overloaded")}
	tokenCfg   = retry.RetryConfig{MaxRetries: 3, InitialBackoff: time.Millisecond, MaxBackoff: time.Millisecond}
)

// rejectShort is a CheckOutput that rejects the answer "short".
func rejectShort(_ context.Context, _, out any) error {
	if out == "short" {
		return errors.New("too short")
	}
	return nil
}

// wantTokens checks the call span's retry.tokens attributes and the
// retry.tokens metric's points by fate.
func wantTokens(t *testing.T, rec *recorder, span string, in, out, discarded int64) {
	t.Helper()
	wantAttrs(t, span+" span", rec.one(t, span).Attributes(), map[string]string{
		"retry.tokens.input": fmt.Sprint(in), "retry.tokens.output": fmt.Sprint(out), "retry.tokens.discarded": fmt.Sprint(discarded),
	})
	fates := map[string]string{}
	for set, v := range rec.points(t)["retry.tokens"] {
		for _, fate := range []string{"delivered", "discarded"} {
			if containsAttr(set, "retry.token.fate="+fate) {
				fates[fate] = v
			}
		}
	}
	want := map[string]string{}
	if d := in + out - discarded; d > 0 {
		want["delivered"] = fmt.Sprint(d)
	}
	if discarded > 0 {
		want["discarded"] = fmt.Sprint(discarded)
	}
	if fmt.Sprint(fates) != fmt.Sprint(want) {
		t.Errorf("retry.tokens by fate = %v, want %v", fates, want)
	}
}

func containsAttr(set, kv string) bool { return slices.Contains(strings.Split(set, ","), kv) }

// An answer CheckOutput rejected was billed and thrown away; the one that
// reached the caller was delivered.
func TestTokensOfARejectedAnswerAreDiscarded(t *testing.T) {
	rec := newRecorder()
	p := &biller{answers: []billed{{in: 100, out: 40, output: "short"}, {in: 100, out: 30, output: "a full answer"}}}
	cfg := tokenCfg
	cfg.CheckOutput = rejectShort
	r, err := retry.New(p, cfg, rec.options()...)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Invoke(t.Context(), "q"); err != nil {
		t.Fatal(err)
	}
	wantTokens(t, rec, "retry.invoke", 200, 70, 140)
}

// MaxRetryTokens stops a call once its thrown-away tokens reach it: after
// the attempt that reached it, not before, and never for usage unknown.
func TestMaxRetryTokensStopsTheCall(t *testing.T) {
	for _, tc := range []struct {
		name     string
		answers  []billed
		max      int
		attempts int
		outcome  retry.Outcome
	}{
		{"the second rejection reaches it", []billed{{in: 100, out: 40, output: "short"}}, 250, 2, retry.OutcomeRetryTokensExhausted},
		{"the first reaches it", []billed{{in: 100, out: 40, output: "short"}}, 140, 1, retry.OutcomeRetryTokensExhausted},
		{"unknown usage counts 0", []billed{{unknown: true, output: "short"}}, 1, 4, retry.OutcomeExhausted},
	} {
		p := &biller{answers: tc.answers}
		cfg := tokenCfg
		cfg.CheckOutput, cfg.MaxRetryTokens = rejectShort, tc.max
		r, err := retry.New(p, cfg)
		if err != nil {
			t.Fatal(err)
		}
		_, err = r.Invoke(t.Context(), "q")
		var re *retry.Error
		if !errors.As(err, &re) || re.Outcome != tc.outcome || re.Attempts != tc.attempts {
			t.Errorf("%s: Invoke() = %v, want %s after %d attempts", tc.name, err, tc.outcome, tc.attempts)
		}
	}
}

// A stream's attempt that failed before its first chunk, after its
// provider reported what it cost, is thrown away; the attempt that
// committed is delivered. MaxRetryTokens stops a stream's retries too.
func TestTokensOfAStream(t *testing.T) {
	rec := newRecorder()
	p := &biller{answers: []billed{{in: 100, err: overloaded}, {in: 100, out: 20, chunks: []any{"Hel", "lo"}}}}
	r, err := retry.New(p, tokenCfg, rec.options()...)
	if err != nil {
		t.Fatal(err)
	}
	ch, err := r.Stream(t.Context(), "q")
	if err != nil {
		t.Fatal(err)
	}
	for range ch {
	}
	wantTokens(t, rec, "retry.stream", 200, 20, 100)

	p = &biller{answers: []billed{{in: 100, err: overloaded}}}
	cfg := tokenCfg
	cfg.MaxRetryTokens = 150
	if r, err = retry.New(p, cfg); err != nil {
		t.Fatal(err)
	}
	ch, err = r.Stream(t.Context(), "q")
	var re *retry.Error
	if err == nil {
		for v := range ch {
			if e, ok := v.(error); ok {
				err = e
			}
		}
	}
	if !errors.As(err, &re) || re.Outcome != retry.OutcomeRetryTokensExhausted || re.Attempts != 2 {
		t.Errorf("Stream() = %v, want retry_tokens_exhausted after 2 attempts (200 tokens thrown away of 150)", err)
	}
}

// A stream that committed and then broke was delivered, however it ended:
// what it yielded reached the caller.
func TestTokensOfACommittedStreamAreDelivered(t *testing.T) {
	rec := newRecorder()
	p := &biller{answers: []billed{{in: 100, out: 5, chunks: []any{"Hel"}, err: overloaded}}}
	r, err := retry.New(p, tokenCfg, rec.options()...)
	if err != nil {
		t.Fatal(err)
	}
	ch, err := r.Stream(t.Context(), "q")
	if err != nil {
		t.Fatal(err)
	}
	for range ch {
	}
	wantTokens(t, rec, "retry.stream", 100, 5, 0)
}

// In a Batch each item counts its own: an item that failed once was
// billed for its failure; one that keeps failing meets MaxRetryTokens on
// its own, while the others go on.
func TestTokensOfBatchItems(t *testing.T) {
	rec := newRecorder()
	items := map[string]*biller{
		"ok":     {answers: []billed{{in: 10, out: 5, output: "a"}}},
		"once":   {answers: []billed{{in: 50, out: 0, err: overloaded}, {in: 50, out: 5, output: "b"}}},
		"always": {answers: []billed{{in: 40, out: 0, err: overloaded}}},
	}
	p := core.RunnableFunc(func(ctx context.Context, in any, _ ...core.Option) (any, error) {
		return items[in.(string)].Invoke(ctx, in)
	})
	cfg := tokenCfg
	cfg.MaxRetryTokens = 60
	r, err := retry.New(p, cfg, rec.options()...)
	if err != nil {
		t.Fatal(err)
	}
	outs, err := r.Batch(t.Context(), []any{"ok", "once", "always"})
	var be *core.BatchError
	if !errors.As(err, &be) || outs[0] != "a" || outs[1] != "b" || be.Errs[0] != nil || be.Errs[1] != nil {
		t.Fatalf("Batch() = %v, %v; want the first two through", outs, err)
	}
	var re *retry.Error
	if !errors.As(be.Errs[2], &re) || re.Outcome != retry.OutcomeRetryTokensExhausted || re.Attempts != 2 || items["always"].calls != 2 {
		t.Errorf("the failing item: %v after %d calls; want retry_tokens_exhausted after 2 (80 tokens of 60)", be.Errs[2], items["always"].calls)
	}
	// 10+5 and 50+5 delivered; 50 (once) and 40+40 (always) thrown away.
	wantTokens(t, rec, "retry.batch", 190, 10, 130)
}

// Inside one attempt: a hedge's request that failed (after its provider
// billed it) is thrown away, the winner's delivered; a fallback's
// candidate that failed is thrown away, the next one's delivered.
func TestTokensOfHedgesAndFallbacks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := newRecorder()
		p := &biller{answers: []billed{{in: 30, out: 10, err: overloaded}, {in: 30, out: 8, output: "answer"}}}
		h, err := hedge.New(p, hedge.Config{Delay: time.Second, MaxHedges: 1})
		if err != nil {
			t.Fatal(err)
		}
		r, err := retry.New(h, tokenCfg, rec.options()...)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := r.Invoke(t.Context(), "q"); err != nil {
			t.Fatal(err)
		}
		wantTokens(t, rec, "retry.invoke", 60, 18, 40)
		if n := len(rec.ended("retry.attempt")); n != 1 {
			t.Errorf("%d retry attempts, want 1: the hedge made the second request", n)
		}
	})

	rec := newRecorder()
	first := &biller{answers: []billed{{in: 20, out: 20, err: overloaded}}}
	second := &biller{answers: []billed{{in: 25, out: 5, output: "answer"}}}
	f, err := fallback.New([]core.Runnable{first, second}, fallback.WithSwitchIf(func(error) bool { return true }))
	if err != nil {
		t.Fatal(err)
	}
	r, err := retry.New(f, tokenCfg, rec.options()...)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Invoke(t.Context(), "q"); err != nil {
		t.Fatal(err)
	}
	wantTokens(t, rec, "retry.invoke", 45, 25, 40)
}

// A call whose provider reports no usage has no retry.tokens attributes
// and no retry.tokens points: unknown is not zero.
func TestUnknownUsageIsNotReported(t *testing.T) {
	rec := newRecorder()
	r, err := retry.New(&biller{answers: []billed{{unknown: true, output: "a"}}}, tokenCfg, rec.options()...)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Invoke(t.Context(), "q"); err != nil {
		t.Fatal(err)
	}
	wantAttrs(t, "call span", rec.one(t, "retry.invoke").Attributes(), nil, "retry.tokens.input", "retry.tokens.output", "retry.tokens.discarded")
	if pts := rec.points(t)["retry.tokens"]; len(pts) != 0 {
		t.Errorf("retry.tokens points %v, want none", pts)
	}
}

// MaxRetryTokens must not be negative.
func TestMaxRetryTokensIsValidated(t *testing.T) {
	_, err := retry.New(&biller{answers: []billed{{}}}, retry.RetryConfig{MaxRetryTokens: -1})
	var ce *retry.ConfigError
	if !errors.As(err, &ce) || ce.Field != "MaxRetryTokens" {
		t.Errorf("New() = %v, want a ConfigError naming MaxRetryTokens", err)
	}
	var cfg retry.RetryConfig
	if err := json.Unmarshal([]byte(`{"max_retry_tokens": 5000}`), &cfg); err != nil || cfg.MaxRetryTokens != 5000 {
		t.Errorf("ParseRetryConfig = %+v, %v; want MaxRetryTokens 5000", cfg, err)
	}
}

// A repaired attempt counts as any other: the failure it repaired was
// billed and thrown away.
func TestTokensOfARepairedCall(t *testing.T) {
	rec := newRecorder()
	tooLong := retry.Permanent(errors.New("400 context_length_exceeded"))
	p := &biller{answers: []billed{{in: 10, err: tooLong}, {in: 10, out: 5, output: "fits"}}}
	cfg := tokenCfg
	cfg.Repair = func(_ context.Context, in any, _ error) (any, bool) { return "shorter", true }
	r, err := retry.New(p, cfg, rec.options()...)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Invoke(t.Context(), "q"); err != nil {
		t.Fatal(err)
	}
	wantTokens(t, rec, "retry.invoke", 20, 5, 10)
}

// A restart voids what the consumer had of the stream: the tokens of the
// broken stream are discarded, the restarted one's delivered.
func TestTokensOfARestartedStream(t *testing.T) {
	rec := newRecorder()
	p := &biller{answers: []billed{
		{in: 100, out: 5, chunks: []any{"Hel"}, err: overloaded},
		{in: 100, out: 20, chunks: []any{"Hel", "lo"}},
	}}
	cfg := tokenCfg
	cfg.RestartStreams = true
	r, err := retry.New(p, cfg, rec.options()...)
	if err != nil {
		t.Fatal(err)
	}
	ch, err := r.Stream(t.Context(), "q", core.WithResets())
	if err != nil {
		t.Fatal(err)
	}
	var got []any
	for v := range ch {
		got = append(got, v)
	}
	if len(got) != 4 {
		t.Fatalf("stream = %v, want Hel, a Reset, Hel, lo", got)
	}
	wantTokens(t, rec, "retry.stream", 200, 25, 105)
}
