package steadfast_test

import (
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/sony/gobreaker/v2"
	"golang.org/x/time/rate"

	"github.com/steadfast-go/steadfast/breaker"
	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/fallback"
	"github.com/steadfast-go/steadfast/hedge"
	"github.com/steadfast-go/steadfast/internal/metricnames"
	"github.com/steadfast-go/steadfast/pool"
	"github.com/steadfast-go/steadfast/ratelimit"
	"github.com/steadfast-go/steadfast/retry"
)

// docs/telemetry.md's table lists every metric any package makes, with its
// kind, and no metric none makes (#72): each package is built once on a
// MeterProvider that notes what is made on it.
func TestTheTelemetryDocListsEveryPackagesMetrics(t *testing.T) {
	llm, _ := scriptedLLM()
	made := map[string]string{}
	build := func(what string, f func(*metricnames.Provider) error) {
		p := &metricnames.Provider{}
		if err := f(p); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if len(p.Made()) == 0 {
			t.Errorf("%s made no instrument: the check reads nothing of it", what)
		}
		maps.Copy(made, p.Made())
	}
	build("retry", func(p *metricnames.Provider) error {
		_, err := retry.New(llm, retry.DefaultRetryConfig(), retry.WithMeterProvider(p),
			retry.WithBudget(retry.RecommendedBudget()), retry.WithGenAIConventions())
		return err
	})
	build("fallback", func(p *metricnames.Provider) error {
		_, err := fallback.New([]core.Runnable{llm, llm}, fallback.WithMeterProvider(p))
		return err
	})
	build("hedge", func(p *metricnames.Provider) error {
		_, err := hedge.New(llm, hedge.Config{Delay: time.Second, MaxHedges: 1}, hedge.WithMeterProvider(p))
		return err
	})
	build("pool", func(p *metricnames.Provider) error {
		_, err := pool.New([]pool.Deployment{{Name: "a", Runnable: llm}}, pool.WithMeterProvider(p))
		return err
	})
	build("breaker", func(p *metricnames.Provider) error {
		_, err := breaker.New(llm, gobreaker.Settings{Name: "llm"}, breaker.WithMeterProvider(p))
		return err
	})
	build("ratelimit", func(p *metricnames.Provider) error {
		_, err := ratelimit.New(llm, ratelimit.InProcess(rate.NewLimiter(rate.Inf, 1)), ratelimit.WithMeterProvider(p))
		return err
	})
	build("ratelimit's Concurrency", func(p *metricnames.Provider) error {
		_, err := ratelimit.NewConcurrency(llm, ratelimit.ConcurrencyConfig{MeterProvider: p})
		return err
	})
	listed, err := metricnames.FromDoc("docs/telemetry.md", "")
	if err != nil {
		t.Fatal(err)
	}
	for name := range listed {
		if strings.HasPrefix(name, "fleet.") {
			delete(listed, name) // the fleet module's, which this module cannot build
		}
	}
	for _, d := range metricnames.Differences("steadfast", made, listed) {
		t.Error(d)
	}
}
