package main

import (
	"fmt"
	"image/color"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/steadfast-go/steadfast/bench/tail"
)

// plotTail draws each variant's p50 and p99 as bars, labelled with the
// extra load.
func plotTail(path string, results []tail.Result) error {
	p := plot.New()
	p.Title.Text = "first-token latency with a heavy tail: p50 and p99 (ms)"
	p.Y.Label.Text = "ms"
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	var p50, p99 plotter.Values
	var names []string
	for _, r := range results {
		p50 = append(p50, ms(r.P50))
		p99 = append(p99, ms(r.P99))
		names = append(names, fmt.Sprintf("%s\n%+.1f%% requests", r.Name, 100*r.ExtraLoad()))
	}
	w := vg.Points(14)
	for i, series := range []struct {
		label string
		vals  plotter.Values
		c     color.Color
	}{{"p50", p50, color.RGBA{31, 119, 180, 255}}, {"p99", p99, color.RGBA{214, 39, 40, 255}}} {
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
	p.Legend.Top = true
	p.NominalX(names...)
	p.X.Tick.Label.Rotation = 0.35
	p.X.Tick.Label.XAlign = -0.9
	return p.Save(28*vg.Centimeter, 14*vg.Centimeter, path)
}
