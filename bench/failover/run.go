package failover

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/openai/openai-go/v3/option"
	"go.opentelemetry.io/otel/metric/noop"
	tnoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/fallback"
	"github.com/steadfast-go/steadfast/providers/openai"
	"github.com/steadfast-go/steadfast/retry"
)

// Routers are the two ways a call is routed: the chain, and the
// reference router.
var Routers = []string{"reference", "steadfast"}

// Result is one call's end.
type Result struct {
	Took time.Duration
	// Segments are the runs of text a core.Reset ended, the last run
	// last; Err the call's failure, if it failed.
	Segments []string
	Err      error
	// Requests are those the primary and the fallback were sent.
	Requests [2]int
}

// Served reports whether the caller got the whole answer once, with
// nothing of another answer mixed in: every run before a Reset is a start
// of the answer, and the last is all of it.
func (r Result) Served() bool {
	if r.Err != nil || len(r.Segments) == 0 || r.Segments[len(r.Segments)-1] != Answer {
		return false
	}
	for _, s := range r.Segments[:len(r.Segments)-1] {
		if s == "" || !strings.HasPrefix(Answer, s) {
			return false
		}
	}
	return true
}

// Config is the chain's retry layer for timing t: docs/deployments.md's
// candidate policy (retry.DefaultRetryConfig, its timeouts, restarts on).
func Config(t Timing) retry.RetryConfig {
	cfg := retry.DefaultRetryConfig()
	cfg.PerAttemptTimeout, cfg.FirstChunkTimeout, cfg.ChunkTimeout = t.PerAttempt, t.FirstChunk, t.Chunk
	cfg.RestartStreams = true
	return cfg
}

// Run makes one call of scenario s at timing t through router, and must
// be called inside a testing/synctest bubble.
func Run(s Scenario, t Timing, router string) (Result, error) {
	fb := s.Fallback
	if fb == nil {
		fb = healthy
	}
	servers := [2]*counted{{next: s.Primary(t)}, {next: fb()}}
	models := make([]core.Runnable, 2)
	for i, srv := range servers {
		models[i] = openai.NewChat(model, option.WithAPIKey("test-key"), option.WithBaseURL("http://openai.test/v1/"),
			option.WithHTTPClient(&http.Client{Transport: srv}), option.WithMaxRetries(0))
	}
	ctx := context.Background()
	if s.Budget > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, s.Budget)
		defer cancel()
	}
	var res Result
	start := time.Now()
	switch router {
	case "reference":
		ref := &reference{candidates: models, timing: t, backoff: retry.DefaultRetryConfig().InitialBackoff}
		if s.Stream {
			res.Segments, res.Err = read(ref.Stream(ctx, "Say hello"))
		} else {
			res.Segments, res.Err = invoked(ref.Invoke(ctx, "Say hello"))
		}
	case "steadfast":
		chain, err := chain(models, t)
		if err != nil {
			return Result{}, err
		}
		if s.Stream {
			ch, err := chain.Stream(ctx, "Say hello", core.WithResets())
			if err != nil {
				res.Err = err
			} else {
				res.Segments, res.Err = read(ch)
			}
		} else {
			res.Segments, res.Err = invoked(chain.Invoke(ctx, "Say hello"))
		}
	default:
		return Result{}, errors.New("failover: unknown router " + router)
	}
	res.Took = time.Since(start)
	res.Requests = [2]int{int(servers[0].n.Load()), int(servers[1].n.Load())}
	return res, nil
}

// chain is docs/deployments.md's: a fallback over a retry layer over
// each model.
func chain(models []core.Runnable, t Timing) (core.Runnable, error) {
	candidates := make([]core.Runnable, len(models))
	for i, m := range models {
		r, err := retry.New(m, Config(t), retry.WithTracerProvider(tnoop.NewTracerProvider()), retry.WithMeterProvider(noop.NewMeterProvider()))
		if err != nil {
			return nil, err
		}
		candidates[i] = r
	}
	return fallback.New(candidates, fallback.WithMaxRestarts(1),
		fallback.WithTracerProvider(tnoop.NewTracerProvider()), fallback.WithMeterProvider(noop.NewMeterProvider()))
}

// read drains a stream: its runs of text, and its failure.
func read(ch <-chan any) ([]string, error) {
	segments := []string{""}
	var err error
	for v := range ch {
		switch v := v.(type) {
		case core.Reset:
			segments = append(segments, "")
		case error:
			err = v
		default:
			segments[len(segments)-1] += openai.Text(v)
		}
	}
	return segments, err
}

func invoked(out any, err error) ([]string, error) {
	if err != nil {
		return nil, err
	}
	return []string{openai.Text(out)}, nil
}
