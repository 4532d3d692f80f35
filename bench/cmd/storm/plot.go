package main

import (
	"fmt"
	"image/color"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/steadfast-go/steadfast/bench/storm"
)

// palette tells the libraries apart.
var palette = []color.Color{
	color.RGBA{0, 0, 0, 255},       // no-retry
	color.RGBA{214, 39, 40, 255},   // steadfast
	color.RGBA{31, 119, 180, 255},  // steadfast+budget
	color.RGBA{23, 190, 207, 255},  // steadfast+adaptive
	color.RGBA{255, 127, 14, 255},  // cenkalti
	color.RGBA{44, 160, 44, 255},   // avast
	color.RGBA{148, 103, 189, 255}, // sethvargo
	color.RGBA{140, 86, 75, 255},   // failsafe
	color.RGBA{227, 119, 194, 255}, // failsafe+budget
}

// plotSeries draws the attempts per Interval of every library over time, with
// the trigger (the outage window or the surge), if any, shaded.
func plotSeries(path string, sc storm.Scenario, results []storm.Result) error {
	p := plot.New()
	p.Title.Text = fmt.Sprintf("%s: attempts per %v (provider capacity %d per %v)",
		sc.Name, storm.Interval, int(sc.Capacity*storm.Interval.Seconds()), storm.Interval)
	p.X.Label.Text = "time (s)"
	p.Y.Label.Text = "attempts"
	p.Legend.Top = true
	p.Legend.Left = true

	peak := 0.0
	for _, r := range results {
		for _, v := range r.Series {
			peak = max(peak, float64(v))
		}
	}
	from, to := sc.OutageStart, sc.OutageEnd
	if sc.SpikeFactor > 0 {
		from, to = sc.SpikeStart, sc.SpikeEnd
	}
	if to > from {
		shade, err := plotter.NewPolygon(plotter.XYs{
			{X: from.Seconds(), Y: 0}, {X: to.Seconds(), Y: 0},
			{X: to.Seconds(), Y: peak * 1.05}, {X: from.Seconds(), Y: peak * 1.05},
		})
		if err != nil {
			return err
		}
		shade.Color = color.RGBA{230, 230, 230, 255}
		shade.LineStyle.Width = 0
		p.Add(shade)
	}

	capacity := sc.Capacity * storm.Interval.Seconds()
	capLine, err := plotter.NewLine(plotter.XYs{{X: 0, Y: capacity}, {X: sc.Duration.Seconds(), Y: capacity}})
	if err != nil {
		return err
	}
	capLine.Dashes = []vg.Length{vg.Points(4), vg.Points(4)}
	capLine.Color = color.RGBA{120, 120, 120, 255}
	p.Add(capLine)
	p.Legend.Add("capacity", capLine)

	for i, r := range results {
		pts := make(plotter.XYs, len(r.Series))
		for j, v := range r.Series {
			pts[j] = plotter.XY{X: (time.Duration(j)*storm.Interval + storm.Interval/2).Seconds(), Y: float64(v)}
		}
		line, err := plotter.NewLine(pts)
		if err != nil {
			return err
		}
		line.Color = palette[i%len(palette)]
		line.Width = vg.Points(1.5)
		if i == 0 {
			line.Dashes = []vg.Length{vg.Points(2), vg.Points(2)}
		}
		p.Add(line)
		p.Legend.Add(r.Library, line)
	}
	p.Legend.ThumbnailWidth = vg.Points(20)
	p.Legend.TextStyle.Font.Size = vg.Points(9)
	return p.Save(10*vg.Inch, 5*vg.Inch, path)
}
