package retry_test

import (
	"testing"

	"github.com/steadfast-go/steadfast/internal/metricnames"
	"github.com/steadfast-go/steadfast/internal/mock"
	"github.com/steadfast-go/steadfast/retry"
)

// docs/telemetry.md's table lists every metric the retry package makes,
// with its kind, and no metric it does not make (#72).
func TestTheTelemetryDocListsEveryMetric(t *testing.T) {
	p := &metricnames.Provider{}
	if _, err := retry.New(mock.New(), testConfig(), retry.WithMeterProvider(p), retry.WithBudget(retry.RecommendedBudget())); err != nil {
		t.Fatal(err)
	}
	made := p.Made()
	sameMetrics(t, "retry", made, "retry")
	if len(made) < 11 {
		t.Errorf("retry made %d instruments (%v), want its 11: the check reads nothing", len(made), made)
	}

	// WithGenAIConventions adds the conventions' instruments, in the rows
	// whose "where" says so.
	g := &metricnames.Provider{}
	if _, err := retry.New(mock.New(), testConfig(), retry.WithMeterProvider(g), retry.WithGenAIConventions()); err != nil {
		t.Fatal(err)
	}
	genAI := g.Made()
	for name := range made {
		delete(genAI, name)
	}
	sameMetrics(t, "retry, GenAI mode", genAI, "retry, GenAI mode")
	if len(genAI) != 7 {
		t.Errorf("the GenAI mode made %d instruments (%v), want the conventions' 7", len(genAI), genAI)
	}
}

// sameMetrics fails unless the instruments made (name → kind) are those
// the doc's rows for where list.
func sameMetrics(t *testing.T, what string, made map[string]string, where string) {
	t.Helper()
	listed, err := metricnames.FromDoc("../docs/telemetry.md", where)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range metricnames.Differences(what, made, listed) {
		t.Error(d)
	}
}
