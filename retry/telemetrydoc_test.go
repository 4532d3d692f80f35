package retry_test

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/embedded"
	"go.opentelemetry.io/otel/metric/noop"

	"github.com/steadfast-go/steadfast/internal/mock"
	"github.com/steadfast-go/steadfast/retry"
)

// instruments is a MeterProvider that remembers the name and kind of
// every instrument made on it.
type instruments struct {
	embedded.MeterProvider
	made map[string]string // name → "counter", "histogram" or "gauge"
}

func (p *instruments) Meter(string, ...metric.MeterOption) metric.Meter { return namingMeter{p: p} }

type namingMeter struct {
	noop.Meter
	p *instruments
}

func (m namingMeter) Int64Counter(name string, opts ...metric.Int64CounterOption) (metric.Int64Counter, error) {
	m.p.made[name] = "counter"
	return m.Meter.Int64Counter(name, opts...)
}

func (m namingMeter) Int64Histogram(name string, opts ...metric.Int64HistogramOption) (metric.Int64Histogram, error) {
	m.p.made[name] = "histogram"
	return m.Meter.Int64Histogram(name, opts...)
}

func (m namingMeter) Float64Histogram(name string, opts ...metric.Float64HistogramOption) (metric.Float64Histogram, error) {
	m.p.made[name] = "histogram"
	return m.Meter.Float64Histogram(name, opts...)
}

func (m namingMeter) Float64ObservableGauge(name string, opts ...metric.Float64ObservableGaugeOption) (metric.Float64ObservableGauge, error) {
	m.p.made[name] = "gauge"
	return m.Meter.Float64ObservableGauge(name, opts...)
}

// docRow matches a row of docs/telemetry.md's table: its names, its kind.
var docRow = regexp.MustCompile("^\\| (`[^|]+`) \\| ([^|]+) \\| ([^|]+) \\|")

// docMetrics returns the metrics docs/telemetry.md's table says package
// where emits, with their kind.
func docMetrics(t *testing.T, where string) map[string]string {
	t.Helper()
	doc, err := os.ReadFile("../docs/telemetry.md")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, line := range strings.Split(string(doc), "\n") {
		m := docRow.FindStringSubmatch(line)
		if m == nil || strings.TrimSpace(m[3]) != where {
			continue
		}
		for _, kind := range []string{"counter", "histogram", "gauge"} {
			if strings.Contains(m[2], kind) {
				for _, name := range strings.Split(m[1], ", ") {
					out[strings.Trim(name, "`")] = kind
				}
			}
		}
	}
	return out
}

// docs/telemetry.md's table lists every metric the retry package makes,
// with its kind, and no metric it does not make (#72).
func TestTheTelemetryDocListsEveryMetric(t *testing.T) {
	p := &instruments{made: map[string]string{}}
	if _, err := retry.New(mock.New(), testConfig(), retry.WithMeterProvider(p), retry.WithBudget(retry.RecommendedBudget())); err != nil {
		t.Fatal(err)
	}
	sameMetrics(t, "retry", p.made, docMetrics(t, "retry"))
	if len(p.made) < 11 {
		t.Errorf("retry made %d instruments (%v), want its 11: the check reads nothing", len(p.made), p.made)
	}

	// WithGenAIConventions adds the conventions' instruments, in the rows
	// whose "where" says so.
	g := &instruments{made: map[string]string{}}
	if _, err := retry.New(mock.New(), testConfig(), retry.WithMeterProvider(g), retry.WithGenAIConventions()); err != nil {
		t.Fatal(err)
	}
	for name := range p.made {
		delete(g.made, name)
	}
	sameMetrics(t, "retry, GenAI mode", g.made, docMetrics(t, "retry, GenAI mode"))
	if len(g.made) != 7 {
		t.Errorf("the GenAI mode made %d instruments (%v), want the conventions' 7", len(g.made), g.made)
	}
}

// sameMetrics fails unless the instruments made (name → kind) are those
// the doc's rows for where list.
func sameMetrics(t *testing.T, where string, made, doc map[string]string) {
	t.Helper()
	for name, kind := range made {
		if doc[name] != kind {
			t.Errorf("%s makes the %s %s; docs/telemetry.md lists it as %q", where, kind, name, doc[name])
		}
	}
	for name := range doc {
		if _, ok := made[name]; !ok {
			t.Errorf("docs/telemetry.md lists %s for %s, which does not make it", name, where)
		}
	}
}
