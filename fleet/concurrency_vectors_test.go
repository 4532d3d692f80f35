package fleet

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"os"
	"testing"
)

// aimdVectors is ratelimit/testdata/aimd.json: the arithmetic of a
// Concurrency's limit, which the Redis script follows as
// ratelimit.Concurrency does.
type aimdVectors struct {
	Cases []struct {
		Name  string
		Start struct {
			Limit, Min, Max float64
			Epoch           uint64
		}
		Steps []struct {
			Overload, Clean, Saturated bool
			HintMS                     int64 `json:"hint_ms"`
			TTFTMS                     int64 `json:"ttft_ms"`
			Cost, InFlight             float64
			Epoch                      uint64
			Repeat                     int
			Want                       struct {
				Limit float64
				Epoch uint64
				Step  float64
			}
		}
	}
}

// The concurrency script passes every vector of ratelimit's limit, against
// a real redis-server, one step (its outcome, repeated) an exchange.
func TestConcurrencyScriptVectors(t *testing.T) {
	rc := testRedis(t)
	data, err := os.ReadFile("../ratelimit/testdata/aimd.json")
	if err != nil {
		t.Fatal(err)
	}
	var v aimdVectors
	if err := json.Unmarshal(data, &v); err != nil || len(v.Cases) < 10 {
		t.Fatalf("vectors: %d cases, %v; want the specification's", len(v.Cases), err)
	}
	for _, c := range v.Cases {
		t.Run(c.Name, func(t *testing.T) {
			var b [6]byte
			_, _ = rand.Read(b[:])
			tag := "steadfast:test:aimd:{" + hex.EncodeToString(b[:]) + "}"
			keys := []string{tag + ":limit", tag + ":procs", tag + ":inflight"}
			defer rc.Del(t.Context(), keys...)
			if c.Start.Epoch > 0 {
				rc.HSet(t.Context(), keys[0], "epoch", c.Start.Epoch)
			}
			for i, s := range c.Steps {
				n := max(s.Repeat, 1) // a step repeated is one batch of outcomes, as a replica sends them
				args := []any{"vectors", c.Start.Min, c.Start.Max, c.Start.Limit, live.Milliseconds(), s.InFlight, n}
				for range n {
					args = append(args, s.Cost, flag(s.Overload), s.HintMS*1e6, flag(s.Clean), s.TTFTMS*1e6, s.Epoch, flag(s.Saturated), s.InFlight)
				}
				a, err := runAIMD(t.Context(), rc, keys, args)
				if err != nil {
					t.Fatalf("step %d: %v", i, err)
				}
				if a.limit != s.Want.Limit || a.epoch != s.Want.Epoch || a.step != s.Want.Step || a.procs != 1 {
					t.Fatalf("step %d: limit %v, epoch %d, step %v (%d processes); want %v, %d, %v (1)",
						i, a.limit, a.epoch, a.step, a.procs, s.Want.Limit, s.Want.Epoch, s.Want.Step)
				}
			}
		})
	}
}
