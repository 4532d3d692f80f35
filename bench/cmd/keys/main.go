// Command keys runs the keys scenario of bench/README.md: a provider whose
// API keys each allow a quota of requests per window and report it in
// OpenAI's x-ratelimit headers, 1.3× one key's quota offered. It compares
// calls that learn of the limit from 429s with calls paced by the headers,
// on one key and through a pool of two, then revokes one of the two
// mid-run.
//
//	go run ./cmd/keys            # the committed run, about six minutes
//	go run ./cmd/keys -quick     # 4 s runs, writing nothing
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/steadfast-go/steadfast/bench/cli"
	"github.com/steadfast-go/steadfast/bench/keys"
)

func main() { cli.Main("keys", "4 s runs, and write nothing", run) }

func run(ctx context.Context, w io.Writer, quick bool, out string) error {
	sc := keys.Default
	if quick {
		sc.Run = 4 * time.Second
	}
	var report strings.Builder
	mw := io.MultiWriter(w, &report)
	mark := func(ok bool) string {
		if ok {
			return "met"
		}
		return "NOT MET"
	}

	fmt.Fprintf(mw, "keys of %d requests per %v each, reported in x-ratelimit headers (computed as a request arrives, sent with its answer %v later); "+
		"Poisson arrivals for %v; openai.Chat behind retry (3 retries, 50 ms doubling to 2 s)\n", sc.Quota, sc.Window, sc.Latency, sc.Run)

	one := sc
	one.Shared = 0
	fmt.Fprintf(mw, "\none key, %.1f× its quota offered: retry(openai.Chat) against retry(ratelimit(openai.Chat)), whose limiter holds the calls beyond what the headers say is left (WithMaxWait 5 s):\n\n", sc.Load)
	res, err := table(ctx, mw, one, []keys.Variant{{Name: "one key, reacting to 429s", OneKey: true}, {Name: "one key, paced by the headers", OneKey: true, Paced: true}})
	if err != nil {
		return err
	}
	targets(mw, sc, res[0], res[1], mark)

	fmt.Fprintf(mw, "\ntwo keys, %.1f× one key's quota offered, through a pool of the two:\n\n", sc.Load)
	res, err = table(ctx, mw, one, keys.Variants[:2])
	if err != nil {
		return err
	}
	targets(mw, sc, res[0], res[1], mark)

	both := one
	both.Load = 2 * sc.Load
	fmt.Fprintf(mw, "\ntwo keys, %.1f× the two keys' quota together (%.1f× one key's) offered, through a pool of the two:\n\n", sc.Load, both.Load)
	res, err = table(ctx, mw, both, keys.Variants[:2])
	if err != nil {
		return err
	}
	targets(mw, both, res[0], res[1], mark)

	fmt.Fprintf(mw, "\ntwo keys, %.1f× one key's quota offered, while another service uses %.0f %% of the first key's quota:\n\n", sc.Load, 100*sc.Shared)
	res, err = table(ctx, mw, sc, keys.Variants[:2])
	if err != nil {
		return err
	}
	targets(mw, sc, res[0], res[1], mark)

	for _, load := range []float64{0.8, sc.Load} {
		rv := sc
		rv.Load, rv.RevokeAt, rv.Shared = load, sc.Run/2, 0
		fmt.Fprintf(mw, "\nthe second key revoked (401 invalid_api_key) at %v, %.1f× one key's quota offered:\n\n", rv.RevokeAt, load)
		res, err := table(ctx, mw, rv, keys.Variants[1:])
		if err != nil {
			return err
		}
		pl := res[0]
		base := rv
		base.RevokeAt = 0
		clean, err := keys.Run(ctx, base, keys.Variants[1])
		if err != nil {
			return err
		}
		fmt.Fprintf(mw, "\n  success ≥ 99 %% through the pool: %.2f %%: %s\n", 100*pl.Success(), mark(pl.Success() >= 0.99))
		fmt.Fprintf(mw, "  no extra retries: %d, against %d with no key revoked: %s\n", pl.Retries, clean.Retries, mark(pl.Retries <= clean.Retries))
	}
	if quick {
		return nil
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(out, "keys.txt"), []byte(report.String()), 0o644)
}

// targets prints whether paced met the targets against reactive.
func targets(w io.Writer, sc keys.Scenario, reactive, paced *keys.Result, mark func(bool) string) {
	fewer := 1 - float64(paced.TooMany())/float64(max(reactive.TooMany(), 1))
	fmt.Fprintf(w, "\n  429s at least 90 %% fewer paced by the headers: %d against %d (%.1f %% fewer): %s\n",
		paced.TooMany(), reactive.TooMany(), 100*fewer, mark(fewer >= 0.9 || reactive.TooMany() == 0))
	fmt.Fprintf(w, "  throughput the same or higher: %.1f against %.1f calls/s: %s\n",
		paced.Throughput(sc), reactive.Throughput(sc), mark(paced.Throughput(sc) >= reactive.Throughput(sc)*0.99))
}

func table(ctx context.Context, w io.Writer, sc keys.Scenario, variants []keys.Variant) ([]*keys.Result, error) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "variant\tsuccess\t429s\t401s\tretries\trequests\tmean")
	var res []*keys.Result
	for _, v := range variants {
		r, err := keys.Run(ctx, sc, v)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", v.Name, err)
		}
		res = append(res, r)
		fmt.Fprintln(tw, r)
	}
	return res, tw.Flush()
}
