package budget

import (
	"encoding/json"
	"math"
	"os"
	"strings"
	"testing"
	"time"
)

// lawVectors is testdata/law.json.
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
			Count    int
		}
		QueryMS int64 `json:"query_ms"`
		Want    struct{ Throttle, Rate float64 }
	}
}

// The window and the law pass every vector, which the fleet module's Redis
// script passes too.
func TestLawVectors(t *testing.T) {
	data, err := os.ReadFile("testdata/law.json")
	if err != nil {
		t.Fatal(err)
	}
	var v lawVectors
	if err := json.Unmarshal(data, &v); err != nil || len(v.Cases) < 8 {
		t.Fatalf("vectors: %d cases, %v; want the specification's", len(v.Cases), err)
	}
	for _, c := range v.Cases {
		t.Run(c.Name, func(t *testing.T) {
			s := DefaultSetting()
			s.K, s.Padding, s.Ratio, s.Floor, s.Window = c.Setting.K, c.Setting.Padding, c.Setting.Ratio, c.Setting.Floor, time.Duration(c.Setting.WindowMS)*time.Millisecond
			if err := s.check("test"); err != nil {
				t.Fatal(err)
			}
			start := time.Unix(1e9, 0)
			w := newWindow(start, s.Window)
			for _, a := range c.Answers {
				for range a.Count {
					w.add(start.Add(time.Duration(a.AtMS)*time.Millisecond), a.N, a.Accepted, 1)
				}
			}
			w.advance(start.Add(time.Duration(c.QueryMS) * time.Millisecond))
			if p, r := s.throttle(w.sum), s.retryRate(w.sum); math.Abs(p-c.Want.Throttle) > 1e-12 || math.Abs(r-c.Want.Rate) > 1e-9 {
				t.Errorf("throttle %v, rate %v; want %v, %v", p, r, c.Want.Throttle, c.Want.Rate)
			}
		})
	}
}

func TestSettingRejectsBadParameters(t *testing.T) {
	for _, tc := range []struct {
		change func(*Setting)
		want   string
	}{
		{func(s *Setting) { s.K = 0.5 }, "K is 0.5"},
		{func(s *Setting) { s.K = math.Inf(1) }, "K is +Inf"},
		{func(s *Setting) { s.Padding = -1 }, "Padding is -1"},
		{func(s *Setting) { s.Ratio = 0 }, "Ratio is 0"},
		{func(s *Setting) { s.Ratio = 1.5 }, "Ratio is 1.5"},
		{func(s *Setting) { s.Floor = -1 }, "Floor is -1"},
		{func(s *Setting) { s.Floor = math.NaN() }, "Floor is NaN"},
		{func(s *Setting) { s.Window = time.Millisecond }, "Window is 1ms"},
		{func(s *Setting) { s.MaxWait = 0 }, "MaxWait is 0s"},
	} {
		s := DefaultSetting()
		tc.change(&s)
		_, err := NewAdaptive(s)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("NewAdaptive(%+v) = %v, want an error naming %q", s, err, tc.want)
		}
		if _, err := NewPacer(s); err == nil {
			t.Errorf("NewPacer(%+v) accepted it", s)
		}
	}
	if _, err := NewAdaptive(DefaultSetting()); err != nil {
		t.Errorf("NewAdaptive(DefaultSetting()) = %v", err)
	}
}
