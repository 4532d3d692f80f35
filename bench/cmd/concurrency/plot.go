package main

import (
	"image/color"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"

	"github.com/steadfast-go/steadfast/bench/concurrency"
)

// palette tells the limiters apart, in the order of concurrency.Names.
var palette = []color.Color{
	color.RGBA{214, 39, 40, 255},  // steadfast
	color.RGBA{140, 86, 75, 255},  // failsafe-go
	color.RGBA{31, 119, 180, 255}, // fixed
	color.RGBA{0, 0, 0, 255},      // no limit
}

// plotGoodput draws every limiter's goodput, a second at a time, as a
// share of what the capacity of that second serves.
func plotGoodput(results []concurrency.Result) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = "goodput per second, % of what the hidden capacity serves (capacity 40, then 10 at 30 s, then 40 at 60 s)"
	p.X.Label.Text = "time (s)"
	p.Y.Label.Text = "goodput (%)"
	p.Legend.Top = true
	for i, r := range results {
		pts := make(plotter.XYs, len(r.Series))
		for j, s := range r.Series {
			pts[j] = plotter.XY{X: s.At.Seconds(), Y: 100 * s.Goodput}
		}
		line, err := plotter.NewLine(pts)
		if err != nil {
			return nil, err
		}
		line.Color = palette[i%len(palette)]
		p.Add(line)
		p.Legend.Add(r.Name, line)
	}
	return p, nil
}

// plotLimit draws steadfast's limit beside the hidden capacity.
func plotLimit(r concurrency.Result) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = "steadfast's limit (ratelimit.concurrency.limit) and the hidden capacity"
	p.X.Label.Text = "time (s)"
	p.Y.Label.Text = "calls in flight"
	p.Legend.Top = true
	limit, capacity := make(plotter.XYs, len(r.Series)), make(plotter.XYs, len(r.Series))
	for j, s := range r.Series {
		limit[j] = plotter.XY{X: s.At.Seconds(), Y: s.Limit}
		capacity[j] = plotter.XY{X: s.At.Seconds(), Y: float64(s.Capacity)}
	}
	for i, l := range []struct {
		name string
		pts  plotter.XYs
	}{{"limit", limit}, {"capacity", capacity}} {
		line, err := plotter.NewLine(l.pts)
		if err != nil {
			return nil, err
		}
		line.Color = palette[i*3]
		p.Add(line)
		p.Legend.Add(l.name, line)
	}
	return p, nil
}
