package repair_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strconv"
	"testing"
	"testing/synctest"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/llmhttp"
	"github.com/steadfast-go/steadfast/repair"
	"github.com/steadfast-go/steadfast/retry"
)

// scripted is a provider that answers a report as JSON, malformed with
// probability 0.3 in one of the corpus' ways, and reports 400 input and
// 120 output tokens an answer.
func scripted(seed uint64, es []entry) core.Runnable {
	rng := rand.New(rand.NewPCG(seed, 0x3a5c))
	var malformed []string
	for _, e := range es {
		if e.Tools == nil {
			malformed = append(malformed, e.Output)
		}
	}
	return core.RunnableFunc(func(ctx context.Context, _ any, _ ...core.Option) (any, error) {
		(&llmhttp.Response{HasUsage: true, InputTokens: 400, OutputTokens: 120}).Record(ctx)
		if rng.Float64() < 0.3 {
			return malformed[rng.IntN(len(malformed))], nil
		}
		return `{"name": "Ada Lovelace", "born": 1815}`, nil
	})
}

// anObject is the application's check: the answer parses as a JSON object
// with at least one member.
func anObject(_ context.Context, _, out any) error {
	var v map[string]any
	if err := json.Unmarshal([]byte(out.(string)), &v); err != nil || len(v) == 0 {
		return fmt.Errorf("not a JSON object with members: %v", err)
	}
	return nil
}

// ladderRun makes calls calls through a retry layer with the check, a
// re-ask and, with local set, repair.JSON first; it returns the paid
// requests, the answers delivered, and the tokens of the call spans by
// fate: delivered and thrown away.
func ladderRun(t *testing.T, local bool, calls int) (requests, answers int, delivered, discarded int64) {
	rec := tracetest.NewSpanRecorder()
	var paid int
	provider := scripted(7, corpus(t))
	counting := core.RunnableFunc(func(ctx context.Context, in any, opts ...core.Option) (any, error) {
		paid++
		return provider.Invoke(ctx, in, opts...)
	})
	cfg := retry.RetryConfig{MaxRetries: 3, InitialBackoff: time.Millisecond, MaxBackoff: time.Millisecond, CheckOutput: anObject,
		NextInput: func(_ context.Context, in any, err error) any {
			return fmt.Sprintf("%v\n(Your last answer was rejected: %v)", in, err)
		}}
	if local {
		cfg.RepairOutput = func(_ context.Context, _, out any, _ error) (any, bool) { return repair.JSON(out.(string)) }
	}
	r, err := retry.New(counting, cfg, retry.WithTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))))
	if err != nil {
		t.Fatal(err)
	}
	for range calls {
		out, err := r.Invoke(t.Context(), "Who wrote the first program? Answer as JSON.")
		if err != nil {
			continue
		}
		if anObject(t.Context(), nil, out) != nil {
			t.Fatalf("delivered %q, which the check rejects", out)
		}
		answers++
	}
	for _, s := range rec.Ended() {
		if s.Name() != "retry.invoke" {
			continue
		}
		var in, out, thrown int64
		for _, kv := range s.Attributes() {
			switch kv.Key {
			case "retry.tokens.input":
				in = kv.Value.AsInt64()
			case "retry.tokens.output":
				out = kv.Value.AsInt64()
			case "retry.tokens.discarded":
				thrown = kv.Value.AsInt64()
			}
		}
		delivered, discarded = delivered+in+out-thrown, discarded+thrown
	}
	return paid, answers, delivered, discarded
}

// On a provider whose answers are malformed three times in ten, a local
// repair before the re-ask cuts the paid requests per delivered answer by
// at least a quarter, and the tokens thrown away with them; every answer
// delivered passes the check.
func TestLocalRepairBeforeReask(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const calls = 1000
		reqA, ansA, delA, disA := ladderRun(t, false, calls)
		reqB, ansB, delB, disB := ladderRun(t, true, calls)
		perA, perB := float64(reqA)/float64(ansA), float64(reqB)/float64(ansB)
		t.Logf("re-ask alone: %d requests for %d answers (%.3f each), tokens delivered %d, thrown away %d", reqA, ansA, perA, delA, disA)
		t.Logf("repair, then re-ask: %d requests for %d answers (%.3f each), tokens delivered %d, thrown away %d", reqB, ansB, perB, delB, disB)
		t.Logf("paid requests per answer %s lower", strconv.FormatFloat(100*(1-perB/perA), 'f', 1, 64)+" %")
		if perB > 0.75*perA {
			t.Errorf("%.3f requests an answer with the repair, %.3f without: want at least 25 %% fewer", perB, perA)
		}
		if disB >= disA {
			t.Errorf("tokens thrown away: %d with the repair, %d without; want fewer", disB, disA)
		}
	})
}
