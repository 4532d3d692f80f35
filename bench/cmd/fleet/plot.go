package main

import (
	"fmt"
	"image/color"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/steadfast-go/steadfast/bench/quota"
)

// plotFleet draws, for each limiter and load, the quota used and the share
// of 429s, in percent.
func plotFleet(path string, results []quota.Result) error {
	p := plot.New()
	p.Title.Text = "8 replicas sharing a tokens-per-minute quota: quota used and 429s (%)"
	p.Y.Label.Text = "%"
	var used, throttled plotter.Values
	var names []string
	for _, r := range results {
		used = append(used, 100*r.QuotaUsed())
		throttled = append(throttled, 100*r.ThrottledShare())
		names = append(names, fmt.Sprintf("%s\n%s load", r.Limiter, r.Load))
	}
	w := vg.Points(14)
	for i, series := range []struct {
		label string
		vals  plotter.Values
		c     color.Color
	}{{"quota used", used, color.RGBA{31, 119, 180, 255}}, {"requests answered 429", throttled, color.RGBA{214, 39, 40, 255}}} {
		bars, err := plotter.NewBarChart(series.vals, w)
		if err != nil {
			return err
		}
		bars.Color = series.c
		bars.LineStyle.Width = 0
		bars.Offset = w * vg.Length(2*i-1) / 2
		p.Add(bars)
		p.Legend.Add(series.label, bars)
	}
	target := plotter.NewFunction(func(float64) float64 { return 95 })
	target.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
	p.Add(target)
	p.Legend.Add("target: 95 % used", target)
	p.Legend.Top = true
	p.Y.Max = 125
	p.NominalX(names...)
	p.X.Tick.Label.Rotation = 0.35
	p.X.Tick.Label.XAlign = -0.9
	return p.Save(30*vg.Centimeter, 15*vg.Centimeter, path)
}
