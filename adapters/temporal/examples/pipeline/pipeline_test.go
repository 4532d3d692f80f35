package main

import (
	"strings"
	"testing"
	"time"
)

// The seed's check, on Temporal: every LLM call answered 429, three
// articles on two workers: each article's first call makes its three
// attempts (two retries) and is dead-lettered.
func TestEveryCallRateLimited(t *testing.T) {
	var out strings.Builder
	cfg := config{articles: 3, workers: 2, rateLimit: 1, seed: 1, latency: time.Millisecond}
	s, err := run(t.Context(), cfg, &out)
	if err != nil {
		t.Fatal(err)
	}
	var table strings.Builder
	s.print(&table, cfg)
	t.Logf("%s%s", out.String(), table.String())
	if !strings.Contains(table.String(), "Succeeded: 0 | Failed: 3 | Dead letter: 3") || s.retries != 6 {
		t.Errorf("table:\n%s\nwant Failed: 3 | Dead letter: 3 and 6 retries", table.String())
	}
	if got := strings.Count(out.String(), "exhausted 3 attempts — dead letter: llm: rate limit exceeded (429)"); got != 3 {
		t.Errorf("%d dead-letter lines, want 3", got)
	}
}

// With no 429 every article succeeds, with no retry.
func TestNoRateLimit(t *testing.T) {
	cfg := config{articles: 4, workers: 2, rateLimit: 0, seed: 1, latency: time.Millisecond}
	s, err := run(t.Context(), cfg, &strings.Builder{})
	if err != nil {
		t.Fatal(err)
	}
	if s.succeeded != 4 || s.failed != 0 || s.retries != 0 {
		t.Errorf("summary %+v, want 4 succeeded, none failed, no retry", s)
	}
}

func TestBadConfig(t *testing.T) {
	for _, cfg := range []config{{articles: -1, workers: 1}, {articles: 1, workers: 0}, {articles: 1, workers: 1, rateLimit: 2}} {
		if _, err := run(t.Context(), cfg, &strings.Builder{}); err == nil {
			t.Errorf("run(%+v) error = nil", cfg)
		}
	}
}
