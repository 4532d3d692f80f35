package main

import (
	"fmt"
	"time"

	"gonum.org/v1/plot"

	"github.com/steadfast-go/steadfast/bench/chart"
	"github.com/steadfast-go/steadfast/bench/tail"
)

// plotTail draws each variant's p50 and p99 as bars, labelled with the
// extra load.
func plotTail(results []tail.Result) (*plot.Plot, error) {
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	var p50, p99 []float64
	var names []string
	for _, r := range results {
		p50 = append(p50, ms(r.P50))
		p99 = append(p99, ms(r.P99))
		names = append(names, fmt.Sprintf("%s\n%+.1f%% requests", r.Name, 100*r.ExtraLoad()))
	}
	return chart.Bars("first-token latency with a heavy tail: p50 and p99 (ms)", "ms", names,
		chart.Series{Label: "p50", Values: p50, Color: chart.Blue},
		chart.Series{Label: "p99", Values: p99, Color: chart.Red})
}
