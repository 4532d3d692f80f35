// Package metricnames is for the tests that hold docs/telemetry.md's
// table to the code: a MeterProvider that remembers every instrument made
// on it, and the metrics the table lists.
package metricnames

import (
	"os"
	"regexp"
	"strings"
	"sync"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/embedded"
	"go.opentelemetry.io/otel/metric/noop"
)

// Provider is a MeterProvider that remembers the name and kind
// ("counter", "histogram" or "gauge") of every instrument made on it.
type Provider struct {
	embedded.MeterProvider
	mu   sync.Mutex
	made map[string]string
}

// Made returns the instruments made so far: name → kind.
func (p *Provider) Made() map[string]string {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make(map[string]string, len(p.made))
	for k, v := range p.made {
		out[k] = v
	}
	return out
}

func (p *Provider) note(name, kind string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.made == nil {
		p.made = map[string]string{}
	}
	p.made[name] = kind
}

// Meter returns a meter that notes its instruments in p.
func (p *Provider) Meter(string, ...metric.MeterOption) metric.Meter { return meter{p: p} }

type meter struct {
	noop.Meter
	p *Provider
}

func (m meter) Int64Counter(name string, opts ...metric.Int64CounterOption) (metric.Int64Counter, error) {
	m.p.note(name, "counter")
	return m.Meter.Int64Counter(name, opts...)
}

func (m meter) Int64Histogram(name string, opts ...metric.Int64HistogramOption) (metric.Int64Histogram, error) {
	m.p.note(name, "histogram")
	return m.Meter.Int64Histogram(name, opts...)
}

func (m meter) Float64Histogram(name string, opts ...metric.Float64HistogramOption) (metric.Float64Histogram, error) {
	m.p.note(name, "histogram")
	return m.Meter.Float64Histogram(name, opts...)
}

func (m meter) Int64Gauge(name string, opts ...metric.Int64GaugeOption) (metric.Int64Gauge, error) {
	m.p.note(name, "gauge")
	return m.Meter.Int64Gauge(name, opts...)
}

func (m meter) Float64ObservableGauge(name string, opts ...metric.Float64ObservableGaugeOption) (metric.Float64ObservableGauge, error) {
	m.p.note(name, "gauge")
	return m.Meter.Float64ObservableGauge(name, opts...)
}

// row matches a row of the table: its names, its kind, where.
var row = regexp.MustCompile("^\\| (`[^|]+`) \\| ([^|]+) \\| ([^|]+) \\|")

// FromDoc returns the metrics the table at path lists (name → kind) in
// the rows whose "where" column is where, or in every row when where is "".
func FromDoc(path, where string) (map[string]string, error) {
	doc, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, line := range strings.Split(string(doc), "\n") {
		m := row.FindStringSubmatch(line)
		if m == nil || (where != "" && strings.TrimSpace(m[3]) != where) {
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
	return out, nil
}

// Differences lists, in words, how made (what the code makes) and listed
// (what the table says) differ, for code named what.
func Differences(what string, made, listed map[string]string) []string {
	var out []string
	for name, kind := range made {
		if listed[name] != kind {
			out = append(out, what+" makes the "+kind+" "+name+"; docs/telemetry.md lists it as "+`"`+listed[name]+`"`)
		}
	}
	for name := range listed {
		if _, ok := made[name]; !ok {
			out = append(out, "docs/telemetry.md lists "+name+" for "+what+", which does not make it")
		}
	}
	return out
}
