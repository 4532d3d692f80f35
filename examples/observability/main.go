// Observability runs an LLM pipeline (retries, a budget per provider, a
// concurrency limit and a fallback) through a seeded storm, with its
// metrics on a Prometheus endpoint through the OpenTelemetry Prometheus
// exporter, and prints what the calls got and the metrics the committed
// Grafana dashboard (dashboard.json) and alert rules (alerts.yml) read.
//
//	go run .                 # the run, then the metrics' names
//	go run . -serve :9464    # then serve /metrics until interrupted, for Prometheus and Grafana
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/signal"
	"sort"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/steadfast-go/steadfast/examples/observability/pipeline"
)

func main() {
	serve := flag.String("serve", "", "after the run, serve /metrics at this address until interrupted")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Stdout, *serve); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// example is the run's configuration: six seconds, the storm from 1.5 s
// to 3.6 s.
var example = pipeline.Config{Seed: 7, Duration: 6 * time.Second, Callers: 16, Think: 20 * time.Millisecond}

// run makes the example's calls, prints their summary and the metrics
// scraped after them, and then serves them at addr, if one is given.
func run(ctx context.Context, w io.Writer, addr string) error {
	reg, mp, err := newMetrics()
	if err != nil {
		return err
	}
	defer mp.Shutdown(context.Background())
	sum, err := pipeline.Run(ctx, mp, example)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "observability: %d streamed calls through a storm: %d answered (%d by the primary, %d by the backup), %d failed\n",
		sum.Calls, sum.Answered, sum.ByModel["primary"], sum.ByModel["backup"], sum.Failed)
	handler := promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
	families, err := scrape(handler)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "metrics on /metrics (%d families), among them:\n", len(families))
	names := make([]string, 0, len(families))
	for name := range families {
		if strings.HasPrefix(name, "retry_") || strings.HasPrefix(name, "fallback_") || strings.HasPrefix(name, "ratelimit_") {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	for _, name := range names {
		fmt.Fprintf(w, "  %s\n", name)
	}
	if addr == "" {
		return nil
	}
	srv := &http.Server{Addr: addr, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/metrics" {
			http.NotFound(w, r)
			return
		}
		handler.ServeHTTP(w, r)
	}), ReadHeaderTimeout: 5 * time.Second}
	fmt.Fprintf(w, "serving http://%s/metrics until interrupted\n", addr)
	errc := make(chan error, 1)
	go func() { errc <- srv.ListenAndServe() }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := srv.Shutdown(shutdown); err != nil {
			return err
		}
		if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
			return err
		}
		return nil
	}
}

// newMetrics is a meter provider whose metrics a Prometheus registry
// serves, through the OpenTelemetry Prometheus exporter.
func newMetrics() (*prometheus.Registry, *sdkmetric.MeterProvider, error) {
	reg := prometheus.NewRegistry()
	exporter, err := otelprom.New(otelprom.WithRegisterer(reg))
	if err != nil {
		return nil, nil, err
	}
	return reg, sdkmetric.NewMeterProvider(sdkmetric.WithReader(exporter)), nil
}

// scrape reads /metrics from handler as Prometheus would, and returns its
// families by name, each with its exposition lines.
func scrape(handler http.Handler) (map[string][]string, error) {
	rec := httptest.NewRecorder()
	handler.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if rec.Code != http.StatusOK {
		return nil, fmt.Errorf("GET /metrics: %d %s", rec.Code, bytes.TrimSpace(rec.Body.Bytes()))
	}
	families := map[string][]string{}
	for _, line := range strings.Split(rec.Body.String(), "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, _, _ := strings.Cut(line, "{")
		name, _, _ = strings.Cut(name, " ")
		families[name] = append(families[name], line)
	}
	return families, nil
}
