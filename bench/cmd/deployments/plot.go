package main

import (
	"fmt"
	"time"

	"gonum.org/v1/plot"

	"github.com/steadfast-go/steadfast/bench/chart"
	"github.com/steadfast-go/steadfast/bench/deployments"
)

// plotDeployments draws each variant's mean and p99 latency as bars,
// labelled with its success share.
func plotDeployments(results []*deployments.Result) (*plot.Plot, error) {
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	var mean, p99 []float64
	var names []string
	for _, r := range results {
		mean = append(mean, ms(r.Mean))
		p99 = append(p99, ms(r.P99))
		names = append(names, fmt.Sprintf("%s\n%.2f%% success", r.Name, 100*r.Success()))
	}
	return chart.Bars("one model, three deployments (one throttled, one slow): latency of successful calls (ms)", "ms", names,
		chart.Series{Label: "mean", Values: mean, Color: chart.Blue},
		chart.Series{Label: "p99", Values: p99, Color: chart.Red})
}
