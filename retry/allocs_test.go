package retry_test

import (
	"context"
	"os"
	"os/exec"
	"testing"

	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/internal/race"
	"github.com/steadfast-go/steadfast/llmhttp"
	"github.com/steadfast-go/steadfast/retry"
)

// skipUnderRace skips a count of allocations under -race, whose
// instrumentation allocates on its own; .ci/run runs them without it.
func skipUnderRace(t *testing.T) {
	if race.Enabled {
		t.Skip("allocations are counted without -race (.ci/run runs them so)")
	}
}

// The allocations of a call, pinned: DESIGN §5's hot paths cost what
// bench/README.md measured, and a change that adds one fails here on any
// machine, where a timing would only drift. A change that removes one
// lowers the pin.
func TestAllocationsPerCall(t *testing.T) {
	skipUnderRace(t)
	if !inFreshProcess(t) {
		return
	}
	ctx := context.Background()
	off, traces, sdk := telemetrySetups[0].opts, telemetrySetups[2].opts, telemetrySetups[3].opts
	recommended := func(opts []retry.Option) []retry.Option {
		return append(opts[:len(opts):len(opts)], retry.WithBudget(retry.RecommendedBudget()))
	}
	genAI := func(opts []retry.Option) []retry.Option {
		return append(opts[:len(opts):len(opts)], retry.WithGenAIConventions())
	}
	for _, c := range []struct {
		name  string
		inner core.RunnableFunc
		opts  []retry.Option
		want  float64
	}{
		{"success/telemetry=off", succeeding, off, 1}, // the attempt's context
		{"success/telemetry=off/recommended-budget", succeeding, recommended(off), 1},
		{"success/telemetry=sdk-traces", succeeding, traces, 7}, // two spans, their attributes, the attempt with its meters
		{"success/telemetry=sdk", succeeding, sdk, 7},
		{"success/telemetry=off/adapter-marks-inference", inferring, off, 1}, // llmhttp.Inference costs nothing outside the GenAI mode
		{"two-failures/telemetry=off", failingTwice, off, 11},
		{"two-failures/telemetry=sdk-traces", failingTwice, traces, 42},
		{"success/telemetry=sdk/genai", inferring, genAI(sdk), 32}, // a third span, its response attributes, seven measurements
	} {
		t.Run(c.name, func(t *testing.T) {
			r, err := retry.New(c.inner, benchConfig(), c.opts...)
			if err != nil {
				t.Fatal(err)
			}
			got := testing.AllocsPerRun(200, func() {
				if _, err := r.Invoke(ctx, "q"); err != nil {
					t.Fatal(err)
				}
			})
			if got != c.want {
				t.Errorf("%v allocations per Invoke, want %v: a change to the hot path (bench/README.md says what each costs)", got, c.want)
			}
		})
	}
}

// inferring is a provider adapter's call that succeeds: it marks where
// its request leaves and records the response's usage.
func inferring(ctx context.Context, _ any, _ ...core.Option) (any, error) {
	ctx = llmhttp.Inference(ctx, adapterAttrs...)
	r := llmhttp.Response{HasUsage: true, InputTokens: 10, OutputTokens: 5}
	r.Record(ctx)
	return "ok", nil
}

// inFreshProcess runs the calling test again in a process of its own and
// reports whether this is that process: what earlier tests leave to the
// runtime (a bubble of ten thousand goroutines' timers) costs a later
// count an allocation, so counts are taken where nothing ran before.
func inFreshProcess(t *testing.T) bool {
	t.Helper()
	const env = "STEADFAST_ALLOCS_FRESH"
	if os.Getenv(env) == t.Name() {
		return true
	}
	cmd := exec.Command(os.Args[0], "-test.run=^"+t.Name()+"$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), env+"="+t.Name())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Errorf("in a process of its own: %v\n%s", err, out)
	}
	return false
}

// A stream forwards its chunks with no allocation of its own, telemetry
// off and with the recording SDK, ChunkTimeout or not: only the stream's
// set-up allocates, once per call.
func TestAllocationsPerChunk(t *testing.T) {
	skipUnderRace(t)
	if !inFreshProcess(t) {
		return
	}
	ctx := context.Background()
	for _, c := range []struct {
		name  string
		opts  []retry.Option
		stall bool
	}{
		{"telemetry=off", telemetrySetups[0].opts, false},
		{"telemetry=off/chunk_timeout", telemetrySetups[0].opts, true},
		{"telemetry=sdk", telemetrySetups[3].opts, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			perCall := func(chunks int) float64 {
				cfg := benchConfig()
				if c.stall {
					cfg.ChunkTimeout = 1 << 40
				}
				r, err := retry.New(chunkSource{n: chunks}, cfg, c.opts...)
				if err != nil {
					t.Fatal(err)
				}
				return testing.AllocsPerRun(50, func() {
					ch, err := r.Stream(ctx, "q")
					if err != nil {
						t.Fatal(err)
					}
					for range ch {
					}
				})
			}
			if short, long := perCall(10), perCall(1010); long != short {
				t.Errorf("a stream of 1010 chunks allocates %v, one of 10 %v: want the same, no allocation per chunk", long, short)
			}
		})
	}
}
