// Package pipeline is the observability example's LLM pipeline: streamed
// chat calls through a fallback over two models, each behind a retry
// layer with its provider's budget, the second behind a concurrency limit
// too, with every layer's metrics on one meter provider. The models are
// fakes that a seeded storm of 429s and slow first chunks hits half-way:
// what the dashboard (dashboard.json) and the alert rules (alerts.yml)
// are drawn from, and tested against.
package pipeline

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"go.opentelemetry.io/otel/metric"

	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/fallback"
	"github.com/steadfast-go/steadfast/ratelimit"
	"github.com/steadfast-go/steadfast/retry"
)

// Config says how long the pipeline runs and how hard it is called.
type Config struct {
	// Seed makes the models' faults; the same seed, the same storm.
	Seed uint64
	// Duration is how long callers call. The storm hits the primary
	// model from a quarter of it to six tenths: nine in ten of its
	// answers are 429s, and the rest come four times as slowly.
	Duration time.Duration
	// Callers call at once, each a stream after the other, with a pause
	// of Think between.
	Callers int
	Think   time.Duration
}

// Summary is what the callers got.
type Summary struct {
	Calls, Answered, Failed int
	ByModel                 map[string]int // answers by the model that gave them
}

// Run builds the pipeline with its metrics on mp and calls it as cfg
// says: callers start calls until cfg.Duration has passed or ctx is done,
// and Run returns once the calls under way have ended.
func Run(ctx context.Context, mp metric.MeterProvider, cfg Config) (Summary, error) {
	if cfg.Duration <= 0 || cfg.Callers <= 0 || cfg.Think < 0 {
		return Summary{}, fmt.Errorf("pipeline: Config %+v: Duration and Callers must be positive, Think not negative", cfg)
	}
	start := time.Now()
	storm := func() bool {
		f := float64(time.Since(start)) / float64(cfg.Duration)
		return f >= 0.25 && f < 0.6
	}
	primary := newModel("primary", cfg.Seed, 40*time.Millisecond, storm)
	backup := newModel("backup", cfg.Seed+1, 120*time.Millisecond, func() bool { return false })
	chat, err := build(mp, primary, backup)
	if err != nil {
		return Summary{}, err
	}
	var (
		mu  sync.Mutex
		sum = Summary{ByModel: map[string]int{}}
		wg  sync.WaitGroup
	)
	for range cfg.Callers {
		wg.Go(func() {
			for time.Since(start) < cfg.Duration && ctx.Err() == nil {
				model, err := call(ctx, chat)
				mu.Lock()
				sum.Calls++
				if err != nil {
					sum.Failed++
				} else {
					sum.Answered++
					sum.ByModel[model]++
				}
				mu.Unlock()
				select {
				case <-time.After(cfg.Think):
				case <-ctx.Done():
				}
			}
		})
	}
	wg.Wait()
	return sum, nil
}

// build is the pipeline: a fallback over the primary behind a retry
// layer with its budget, and the backup behind a retry layer with its own
// and a concurrency limit (the backup is the smaller deployment: the
// limit finds what it can take when the primary's calls move to it).
func build(mp metric.MeterProvider, primary, backup core.Runnable) (core.Runnable, error) {
	cfg := retry.DefaultRetryConfig()
	cfg.InitialBackoff, cfg.MaxBackoff = 50*time.Millisecond, time.Second
	cfg.FirstChunkTimeout = 2 * time.Second // a first token later than this is a silent route
	first, err := retry.New(primary, cfg, retry.WithBudget(retry.RecommendedBudget()), retry.WithMeterProvider(mp))
	if err != nil {
		return nil, err
	}
	limited, err := ratelimit.NewConcurrency(backup, ratelimit.ConcurrencyConfig{Initial: 8, Max: 64, MeterProvider: mp})
	if err != nil {
		return nil, err
	}
	second, err := retry.New(limited, cfg, retry.WithBudget(retry.RecommendedBudget()), retry.WithMeterProvider(mp))
	if err != nil {
		return nil, err
	}
	return fallback.New([]core.Runnable{first, second}, fallback.WithMeterProvider(mp))
}

// callTimeout is each call's deadline, as a request handler would set it.
const callTimeout = 10 * time.Second

// call makes one call and reads its answer to the end: it returns the
// model that answered.
func call(ctx context.Context, chat core.Runnable) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	ch, err := chat.Stream(ctx, "Summarize the incident report", core.WithOperation("chat"))
	if err != nil {
		return "", err
	}
	model := ""
	for v := range ch {
		switch v := v.(type) {
		case error:
			err = v
		case chunk:
			model = v.model
		}
	}
	return model, err
}

// chunk is a piece of a fake model's answer.
type chunk struct {
	model, text string
}

// statusError is a fake provider's refusal, with its HTTP status.
type statusError struct{ code int }

func (e *statusError) Error() string   { return fmt.Sprintf("fake provider: HTTP %d", e.code) }
func (e *statusError) StatusCode() int { return e.code }

// model is a fake LLM: it streams five chunks after a first-chunk wait
// around firstChunk, and during a storm refuses most requests with a 429
// and answers the rest four times as slowly.
type model struct {
	name       string
	firstChunk time.Duration
	storm      func() bool
	mu         sync.Mutex
	rng        *rand.Rand
}

func newModel(name string, seed uint64, firstChunk time.Duration, storm func() bool) *model {
	return &model{name: name, firstChunk: firstChunk, storm: storm, rng: rand.New(rand.NewPCG(seed, 0x5eed))}
}

// Name names the model, for the metrics' fallback.from.
func (m *model) Name() string { return m.name }

// draw returns, for one request, whether it is refused, and its first
// chunk's wait.
func (m *model) draw() (refused bool, wait time.Duration) {
	m.mu.Lock()
	defer m.mu.Unlock()
	wait = time.Duration(float64(m.firstChunk) * (0.5 + m.rng.Float64()))
	if m.storm() {
		return m.rng.Float64() < 0.9, 4 * wait
	}
	return m.rng.Float64() < 0.02, wait // a 503 now and then
}

func (m *model) Invoke(ctx context.Context, input any, opts ...core.Option) (any, error) {
	ch, err := m.Stream(ctx, input, opts...)
	if err != nil {
		return nil, err
	}
	var text string
	for v := range ch {
		switch v := v.(type) {
		case error:
			return nil, v
		case chunk:
			text += v.text
		}
	}
	return text, nil
}

func (m *model) Batch(ctx context.Context, inputs []any, opts ...core.Option) ([]any, error) {
	return core.RunnableFunc(m.Invoke).Batch(ctx, inputs, opts...)
}

// Stream refuses the request, or streams the answer on a goroutine that
// ends with it or with ctx.
func (m *model) Stream(ctx context.Context, _ any, _ ...core.Option) (<-chan any, error) {
	refused, wait := m.draw()
	if refused {
		if m.storm() {
			return nil, &statusError{code: 429}
		}
		return nil, &statusError{code: 503}
	}
	ch := make(chan any)
	go func() {
		defer close(ch)
		for i := range 5 {
			select {
			case <-time.After(wait):
			case <-ctx.Done():
				return
			}
			wait = 10 * time.Millisecond // the chunks after the first come quickly
			select {
			case ch <- chunk{model: m.name, text: fmt.Sprintf("part %d ", i)}:
			case <-ctx.Done():
				return
			}
		}
	}()
	return ch, nil
}
