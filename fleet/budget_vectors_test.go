package fleet

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"math"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/steadfast-go/steadfast/budget"
)

// lawVectors is budget/testdata/law.json: the law of package budget, which
// the budget script follows as budget.Adaptive does.
type lawVectors struct {
	Cases []struct {
		Name    string
		Setting struct {
			K, Padding, Ratio, Floor float64
			WindowMS                 int64 `json:"window_ms"`
		}
		Answers []struct {
			AtMS     int64 `json:"at_ms"`
			N        int
			Accepted bool
			Count    int64
		}
		QueryMS int64 `json:"query_ms"`
		Want    struct{ Throttle, Rate float64 }
	}
}

// The budget script passes every vector of package budget's law, against
// a real redis-server, one exchange per group of answers and one to ask.
func TestBudgetScriptVectors(t *testing.T) {
	rc := testRedis(t)
	data, err := os.ReadFile("../budget/testdata/law.json")
	if err != nil {
		t.Fatal(err)
	}
	var v lawVectors
	if err := json.Unmarshal(data, &v); err != nil || len(v.Cases) < 8 {
		t.Fatalf("vectors: %d cases, %v; want the specification's", len(v.Cases), err)
	}
	for _, c := range v.Cases {
		t.Run(c.Name, func(t *testing.T) {
			var b [6]byte
			_, _ = rand.Read(b[:])
			tag := "steadfast:test:law:{" + hex.EncodeToString(b[:]) + "}"
			keys := []string{tag + ":counts", tag + ":procs"}
			defer rc.Del(t.Context(), keys...)
			s := budget.DefaultSetting()
			s.K, s.Padding, s.Ratio, s.Floor, s.Window = c.Setting.K, c.Setting.Padding, c.Setting.Ratio, c.Setting.Floor, time.Duration(c.Setting.WindowMS)*time.Millisecond
			// A start on a slot's edge, as the vectors' are, and recent
			// enough for the keys' expiry to keep them.
			start := time.Now().UnixMilli() / c.Setting.WindowMS * c.Setting.WindowMS
			at := func(ms int64) string { return strconv.FormatInt(start+ms, 10) }
			for _, a := range c.Answers {
				d := counts{requests: a.Count}
				if a.Accepted {
					d.accepts = a.Count
				}
				if a.N <= 1 {
					d.firsts = a.Count
				}
				if _, err := runLaw(t.Context(), rc, keys, s, d, "p", at(a.AtMS)); err != nil {
					t.Fatal(err)
				}
			}
			got, err := runLaw(t.Context(), rc, keys, s, counts{}, "p", at(c.QueryMS))
			if err != nil {
				t.Fatal(err)
			}
			if math.Abs(got.throttle-c.Want.Throttle) > 1e-12 || math.Abs(got.rate-c.Want.Rate) > 1e-9 || got.procs != 1 {
				t.Errorf("throttle %v, rate %v (%d processes); want %v, %v (1)", got.throttle, got.rate, got.procs, c.Want.Throttle, c.Want.Rate)
			}
		})
	}
}
