package main

import (
	"fmt"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/steadfast-go/steadfast/bench/chart"
	"github.com/steadfast-go/steadfast/bench/quota"
)

// plotFleet draws, for each limiter and load, the quota used and the share
// of 429s, in percent, and the target.
func plotFleet(results []quota.Result) (*plot.Plot, error) {
	var used, throttled []float64
	var names []string
	for _, r := range results {
		used = append(used, 100*r.QuotaUsed())
		throttled = append(throttled, 100*r.ThrottledShare())
		names = append(names, fmt.Sprintf("%s\n%s load", r.Limiter, r.Load))
	}
	p, err := chart.Bars("8 replicas sharing a tokens-per-minute quota: quota used and 429s (%)", "%", names,
		chart.Series{Label: "quota used", Values: used, Color: chart.Blue},
		chart.Series{Label: "requests answered 429", Values: throttled, Color: chart.Red})
	if err != nil {
		return nil, err
	}
	target := plotter.NewFunction(func(float64) float64 { return 95 })
	target.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
	p.Add(target)
	p.Legend.Add("target: 95 % used", target)
	p.Y.Max = 125
	return p, nil
}
