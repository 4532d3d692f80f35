package main

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func base() config {
	return config{articles: 5, workers: 2, rateLimit: 0.3, seed: 1, latency: 10 * time.Millisecond, rps: 10}
}

func run(t *testing.T, ctx context.Context, cfg config) (summary, string) {
	t.Helper()
	var out bytes.Buffer
	s, err := runPipeline(ctx, cfg, &out)
	if err != nil {
		t.Fatal(err)
	}
	if got := s.succeeded + s.failed; got != cfg.articles || s.deadLetter > s.failed {
		t.Errorf("succeeded + failed = %d with %d dead letters, want one result per article (%d), dead letters among the failed", got, s.deadLetter, cfg.articles)
	}
	if got := strings.Count(out.String(), "retrying in"); got != s.retries {
		t.Errorf("retry lines = %d, want one per retry (%d)", got, s.retries)
	}
	return s, out.String()
}

func TestAllRateLimitedAreDeadLettered(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := base()
		cfg.articles, cfg.rateLimit = 3, 1.0
		s, out := run(t, t.Context(), cfg)
		if s.deadLetter != 3 || s.retries != 6 || s.succeeded != 0 || s.failed != 3 {
			t.Errorf("summary = %+v, want 3 failed, all dead-lettered, after 6 retries", s)
		}
		for a := 1; a <= 3; a++ {
			line := fmt.Sprintf("[article %d] exhausted 3 attempts — dead letter: llm: rate limit exceeded (429)\n", a)
			if !strings.Contains(out, line) {
				t.Errorf("output lacks %q:\n%s", line, out)
			}
		}
		var printed bytes.Buffer
		s.print(&printed, cfg)
		if want := "Succeeded: 0 | Failed: 3 | Dead letter: 3\nTotal retries: 6 |"; !strings.Contains(printed.String(), want) {
			t.Errorf("summary printed:\n%s\nwant it to contain %q", printed.String(), want)
		}
		// Two waves of one article per worker, each at most 100ms + 200ms of
		// backoff and three 10ms calls.
		if s.duration > 2*330*time.Millisecond {
			t.Errorf("duration = %v, want at most 660ms", s.duration)
		}
	})
}

func TestSeededRunIsRepeatable(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		first, _ := run(t, t.Context(), base())
		for _, workers := range []int{1, 2, 5} {
			cfg := base()
			cfg.workers = workers
			s, _ := run(t, t.Context(), cfg)
			if s.succeeded != first.succeeded || s.deadLetter != first.deadLetter || s.retries != first.retries {
				t.Errorf("workers=%d: summary = %+v, want the counts of %+v", workers, s, first)
			}
		}
		// Seed 1 at 30%: two 429s in all, both retried successfully.
		if first.succeeded != 5 || first.retries != 2 {
			t.Errorf("seed 1: summary = %+v, want 5 succeeded after 2 retries", first)
		}
	})
}

func TestNoRateLimitNoRetries(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := base()
		cfg.rateLimit, cfg.articles = 0, 20
		if s, _ := run(t, t.Context(), cfg); s.succeeded != 20 || s.retries != 0 {
			t.Errorf("summary = %+v, want 20 succeeded, no retries", s)
		}
	})
}

func TestCancelReportsUnfinishedArticles(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		cfg := base()
		cfg.articles, cfg.rateLimit, cfg.latency = 10, 0.9, 200*time.Millisecond
		time.AfterFunc(250*time.Millisecond, cancel)
		start := time.Now()
		s, out := run(t, ctx, cfg)
		if time.Since(start) != 250*time.Millisecond {
			t.Errorf("returned %v after start, want at the cancellation (250ms)", time.Since(start))
		}
		if got := strings.Count(out, "cancelled"); got != s.failed || got < 8 {
			t.Errorf("cancelled lines = %d, failed = %d, want every unfinished article (at least 8):\n%s", got, s.failed, out)
		}
	})
}

func TestBreakerAndLimiterSwitches(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := base()
		cfg.articles, cfg.rateLimit, cfg.breaker, cfg.limiter = 6, 1.0, true, true
		s, out := run(t, t.Context(), cfg)
		// The circuit opens after 5 failed calls: the rest fail fast and are
		// dead-lettered too, with fewer retries than 2 per article.
		if s.deadLetter != 6 || s.retries >= 12 {
			t.Errorf("summary = %+v, want 6 dead-lettered and fewer than 12 retries", s)
		}
		if !strings.Contains(out, "circuit breaker is open") {
			t.Errorf("output never mentions the open circuit:\n%s", out)
		}
	})
}

func TestBadFlags(t *testing.T) {
	for _, cfg := range []config{{workers: 0}, {workers: 1, rateLimit: 2}, {workers: 1, articles: -1}, {workers: 1, limiter: true}} {
		if _, err := runPipeline(t.Context(), cfg, &bytes.Buffer{}); err == nil {
			t.Errorf("runPipeline(%+v) error = nil, want one naming the flag", cfg)
		}
	}
}

// With -chaos, the failures are the chaos package's faults: they reach the
// table by their error.type, a spent quota is not retried, and the same
// seed on one worker gives the same run.
func TestChaosFaultsReplayWithTheSeed(t *testing.T) {
	runs := make([]summary, 2)
	for i := range runs {
		synctest.Test(t, func(t *testing.T) {
			cfg := base()
			cfg.chaos, cfg.seed, cfg.workers, cfg.articles, cfg.rateLimit = true, 7, 1, 20, 0.5
			runs[i], _ = run(t, t.Context(), cfg)
		})
	}
	a, b := runs[0], runs[1]
	if fmt.Sprint(a.met) != fmt.Sprint(b.met) || a.succeeded != b.succeeded || a.retries != b.retries {
		t.Errorf("seed 7 gave %+v, then %+v; want the same run", a, b)
	}
	if a.met["rate_limit_exceeded"] == 0 || a.met["server_error"] == 0 || a.succeeded == 0 {
		t.Errorf("failed attempts by error.type %v with %d succeeded; want rate limits and server errors met, and articles through", a.met, a.succeeded)
	}
	var printed bytes.Buffer
	a.print(&printed, config{chaos: true, seed: 7, rateLimit: 0.5})
	if !strings.Contains(printed.String(), "chaos faults, seed 7") || !strings.Contains(printed.String(), "rate_limit_exceeded") {
		t.Errorf("summary printed:\n%s\nwant the seed and the table", printed.String())
	}
}
