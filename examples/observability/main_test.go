package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.uber.org/goleak"

	"github.com/steadfast-go/steadfast/examples/observability/pipeline"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// queries returns the PromQL expressions of the dashboard's panels and
// of the alert rules, each named by where it is.
func queries(t *testing.T) map[string]string {
	t.Helper()
	var dash struct {
		Panels []struct {
			Title   string
			Targets []struct{ Expr string }
		}
	}
	b, err := os.ReadFile("dashboard.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &dash); err != nil {
		t.Fatalf("dashboard.json: %v", err)
	}
	out := map[string]string{}
	for _, p := range dash.Panels {
		for i, target := range p.Targets {
			out["panel "+p.Title+" #"+strconv.Itoa(i)] = target.Expr
		}
	}
	rules, err := os.ReadFile("alerts.yml")
	if err != nil {
		t.Fatal(err)
	}
	alert := ""
	for _, line := range strings.Split(string(rules), "\n") {
		line = strings.TrimSpace(line)
		if name, ok := strings.CutPrefix(line, "- alert: "); ok {
			alert = name
		}
		if expr, ok := strings.CutPrefix(line, "expr: "); ok {
			out["alert "+alert] = expr
		}
	}
	if len(dash.Panels) < 6 || !strings.Contains(string(rules), "alert: ") {
		t.Fatalf("%d panels, alerts %q: want the six panels and the alert rules", len(dash.Panels), rules)
	}
	return out
}

// labels are what in a PromQL expression is not a metric's name: label
// matchers, grouping, legends and label templates.
var labels = regexp.MustCompile(`\{\{[^}]*\}\}|\{[^}]*\}|(by|without) \([^)]*\)|\[[^\]]*\]`)

// metricName is a name of steadfast's metrics, as the Prometheus exporter
// writes them.
var metricName = regexp.MustCompile(`\b(retry|fallback|ratelimit|pool|hedge|breaker)_[a-z0-9_]+\b`)

// Every metric a dashboard panel or an alert rule queries is on the
// example's /metrics after its seeded run, with data: a counter or a
// histogram that counted something, a gauge that is there. The dashboard
// cannot drift from the code without this failing.
func TestTheDashboardAndAlertsReadMetricsThatAreThere(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reg, mp, err := newMetrics()
		if err != nil {
			t.Fatal(err)
		}
		defer mp.Shutdown(context.Background())
		sum, err := pipeline.Run(t.Context(), mp, example)
		if err != nil {
			t.Fatal(err)
		}
		if sum.ByModel["backup"] == 0 || sum.ByModel["primary"] == 0 {
			t.Errorf("summary %+v: want answers from both models (the storm moves calls to the backup)", sum)
		}
		families, err := scrape(promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
		if err != nil {
			t.Fatal(err)
		}
		checked := 0
		for where, expr := range queries(t) {
			names := metricName.FindAllString(labels.ReplaceAllString(expr, ""), -1)
			if len(names) == 0 {
				t.Errorf("%s: %q reads no steadfast metric", where, expr)
			}
			for _, name := range names {
				checked++
				if !hasData(families, name) {
					t.Errorf("%s reads %s, which the example's /metrics has no data for", where, name)
				}
			}
		}
		if checked < 10 {
			t.Errorf("%d metric reads checked, want the dashboard's and the alerts'", checked)
		}
	})
}

// hasData reports whether the scraped families have name with data: for
// a histogram's buckets, a count above zero; for a counter, a value above
// zero; for anything else, a sample.
func hasData(families map[string][]string, name string) bool {
	lines := families[name]
	if base, ok := strings.CutSuffix(name, "_bucket"); ok {
		lines = families[base+"_count"]
	}
	for _, line := range lines {
		if !strings.HasSuffix(name, "_total") && !strings.HasSuffix(name, "_bucket") {
			return true
		}
		fields := strings.Fields(line)
		if v, err := strconv.ParseFloat(fields[len(fields)-1], 64); err == nil && v > 0 {
			return true
		}
	}
	return false
}

// The example runs and says what it did.
func TestRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var out bytes.Buffer
		if err := run(t.Context(), &out, ""); err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"streamed calls through a storm", "retry_call_duration_seconds_bucket", "fallback_switches_total"} {
			if !strings.Contains(out.String(), want) {
				t.Errorf("output lacks %q:\n%s", want, out.String())
			}
		}
	})
}
