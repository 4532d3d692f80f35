// Package dashboard draws examples/observability's Grafana dashboard
// without Grafana: it runs the example's pipeline through its seeded storm
// in virtual time, reads the Prometheus registry every second as a scrape
// would, and plots each panel's queries from those scrapes (a rate over
// the last window of a counter, a quantile of a histogram's buckets, a
// gauge's value).
package dashboard

import (
	"context"
	"math"
	"sort"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/steadfast-go/steadfast/examples/observability/pipeline"
)

// Storm is the run drawn: a minute, the storm from 15 s to 36 s.
var Storm = pipeline.Config{Seed: 7, Duration: time.Minute, Callers: 16, Think: 20 * time.Millisecond}

// Scrape is the registry's families at one moment, by name.
type Scrape struct {
	At       time.Duration // since the run began
	Families map[string]*dto.MetricFamily
}

// Run runs cfg's pipeline and scrapes it every interval; it must be
// called inside a testing/synctest bubble, where the minute passes at
// once.
func Run(cfg pipeline.Config, interval time.Duration) ([]Scrape, pipeline.Summary, error) {
	reg := prometheus.NewRegistry()
	exporter, err := otelprom.New(otelprom.WithRegisterer(reg))
	if err != nil {
		return nil, pipeline.Summary{}, err
	}
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(exporter))
	defer mp.Shutdown(context.Background())
	start := time.Now()
	done := make(chan struct{})
	var sum pipeline.Summary
	var runErr error
	go func() {
		defer close(done)
		sum, runErr = pipeline.Run(context.Background(), mp, cfg)
	}()
	var scrapes []Scrape
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		select {
		case <-tick.C:
			s, err := scrape(reg, time.Since(start))
			if err != nil {
				<-done
				return nil, sum, err
			}
			scrapes = append(scrapes, s)
		case <-done:
			return scrapes, sum, runErr
		}
	}
}

func scrape(reg *prometheus.Registry, at time.Duration) (Scrape, error) {
	fams, err := reg.Gather()
	if err != nil {
		return Scrape{}, err
	}
	s := Scrape{At: at, Families: map[string]*dto.MetricFamily{}}
	for _, f := range fams {
		s.Families[f.GetName()] = f
	}
	return s, nil
}

// label returns m's value of the label name, "" when it has none.
func label(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

// Rate is sum by (by) (rate(family[window])) at each scrape from the
// window's end on: the counter's increase over the window, per second,
// by the value of the label by ("" for one series); keep, when set,
// says which samples count.
func Rate(scrapes []Scrape, family, by string, window int, keep func(*dto.Metric) bool) map[string][]Point {
	total := func(s Scrape) map[string]float64 {
		out := map[string]float64{}
		if f := s.Families[family]; f != nil {
			for _, m := range f.GetMetric() {
				if keep == nil || keep(m) {
					out[label(m, by)] += m.GetCounter().GetValue()
				}
			}
		}
		return out
	}
	series := map[string][]Point{}
	for i := window; i < len(scrapes); i++ {
		now, then := total(scrapes[i]), total(scrapes[i-window])
		secs := (scrapes[i].At - scrapes[i-window].At).Seconds()
		for k, v := range now {
			series[k] = append(series[k], Point{T: scrapes[i].At.Seconds(), V: (v - then[k]) / secs})
		}
	}
	return series
}

// Quantile is histogram_quantile(q, sum by (le) (rate(family_bucket[window])))
// at each scrape from the window's end on, with Prometheus's linear
// interpolation inside a bucket; no point where the window saw nothing.
func Quantile(scrapes []Scrape, family string, q float64, window int) []Point {
	buckets := func(s Scrape) ([]float64, []float64) {
		f := s.Families[family]
		if f == nil {
			return nil, nil
		}
		counts := map[float64]float64{}
		for _, m := range f.GetMetric() {
			for _, b := range m.GetHistogram().GetBucket() {
				counts[b.GetUpperBound()] += float64(b.GetCumulativeCount())
			}
			counts[math.Inf(1)] += float64(m.GetHistogram().GetSampleCount())
		}
		bounds := make([]float64, 0, len(counts))
		for b := range counts {
			bounds = append(bounds, b)
		}
		sort.Float64s(bounds)
		cum := make([]float64, len(bounds))
		for i, b := range bounds {
			cum[i] = counts[b]
		}
		return bounds, cum
	}
	var out []Point
	for i := window; i < len(scrapes); i++ {
		bounds, now := buckets(scrapes[i])
		_, then := buckets(scrapes[i-window])
		if len(now) == 0 {
			continue
		}
		delta := make([]float64, len(now))
		for k := range now {
			delta[k] = now[k]
			if k < len(then) {
				delta[k] -= then[k]
			}
		}
		total := delta[len(delta)-1]
		if total <= 0 {
			continue
		}
		rank, lower, below := q*total, 0.0, 0.0
		for k, b := range bounds {
			if delta[k] >= rank {
				if math.IsInf(b, 1) {
					b = lower // the highest finite bound, as Prometheus answers
				}
				v := lower + (b-lower)*(rank-below)/math.Max(delta[k]-below, 1e-12)
				out = append(out, Point{T: scrapes[i].At.Seconds(), V: v})
				break
			}
			lower, below = b, delta[k]
		}
	}
	return out
}

// Gauge is max(family) at each scrape.
func Gauge(scrapes []Scrape, family string) []Point {
	var out []Point
	for _, s := range scrapes {
		f := s.Families[family]
		if f == nil {
			continue
		}
		v := math.Inf(-1)
		for _, m := range f.GetMetric() {
			v = math.Max(v, m.GetGauge().GetValue())
		}
		out = append(out, Point{T: s.At.Seconds(), V: v})
	}
	return out
}

// Point is one value of a panel's series.
type Point struct{ T, V float64 }
