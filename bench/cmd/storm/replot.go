package main

import (
	"encoding/csv"
	"os"
	"path/filepath"
	"strconv"

	"github.com/steadfast-go/steadfast/bench/storm"
)

// replotAll draws the plots of one provider size again from the series
// that a run wrote to dir.
func replotAll(dir string, size float64) error {
	for _, family := range storms(size) {
		for _, st := range family {
			results, err := readSeries(filepath.Join(dir, st.Scenario.Name+".csv"))
			if err != nil {
				return err
			}
			if err := plotSeries(filepath.Join(dir, st.Scenario.Name+".png"), st.Scenario, results); err != nil {
				return err
			}
		}
	}
	return nil
}

// readSeries reads what writeSeries wrote: the libraries and their
// attempts per Interval.
func readSeries(path string) ([]storm.Result, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil || len(rows) == 0 {
		return nil, err
	}
	results := make([]storm.Result, len(rows[0])-1)
	for i, name := range rows[0][1:] {
		results[i].Library = name
	}
	for _, row := range rows[1:] {
		for i, v := range row[1:] {
			n, err := strconv.Atoi(v)
			if err != nil {
				return nil, err
			}
			results[i].Series = append(results[i].Series, n)
		}
	}
	return results, nil
}
