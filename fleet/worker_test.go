package fleet_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	mnoop "go.opentelemetry.io/otel/metric/noop"
	tnoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/steadfast-go/steadfast/budget"
	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/fleet"
	"github.com/steadfast-go/steadfast/ratelimit"
	"github.com/steadfast-go/steadfast/retry"
)

// A worker is one replica of a fleet, run as an OS process of its own: the
// test binary started again with these variables set. It prints "result N".
const (
	workerEnv = "FLEET_WORKER" // limiter, budget or local-budget
	keyEnv    = "FLEET_KEY"
	startEnv  = "FLEET_START" // Unix nanoseconds when every worker begins
	runEnv    = "FLEET_RUN"   // how long they run
	loadEnv   = "FLEET_LOAD"  // budget workers: calls a second
)

// Both kinds of worker share these settings.
const (
	limitRate   = 200.0 // tokens a second
	limitBurst  = 20
	outageFloor = 10 // retries a second left in an outage
)

var quiet = slog.New(slog.DiscardHandler)

// startWorkers starts n workers of one kind and returns the sum of their
// results.
func startWorkers(t *testing.T, n int, kind, key string, run time.Duration, load int) int {
	t.Helper()
	start := time.Now().Add(500 * time.Millisecond) // time enough for every process to start
	type proc struct {
		cmd *exec.Cmd
		out bytes.Buffer
	}
	procs := make([]*proc, n)
	for i := range procs {
		p := &proc{cmd: exec.Command(os.Args[0], "-test.run=^$")}
		p.cmd.Env = append(os.Environ(),
			workerEnv+"="+kind, keyEnv+"="+key,
			startEnv+"="+strconv.FormatInt(start.UnixNano(), 10),
			runEnv+"="+run.String(), loadEnv+"="+strconv.Itoa(load))
		p.cmd.Stdout, p.cmd.Stderr = &p.out, &p.out
		if err := p.cmd.Start(); err != nil {
			t.Fatal(err)
		}
		procs[i] = p
	}
	total := 0
	for i, p := range procs {
		if err := p.cmd.Wait(); err != nil {
			t.Fatalf("worker %d: %v\n%s", i, err, p.out.String())
		}
		var got int
		if _, err := fmt.Sscanf(lastLine(p.out.String()), "result %d", &got); err != nil {
			t.Fatalf("worker %d printed %q", i, p.out.String())
		}
		total += got
	}
	return total
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

func runWorker(kind string) (int, error) {
	startNs, err := strconv.ParseInt(os.Getenv(startEnv), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", startEnv, err)
	}
	run, err := time.ParseDuration(os.Getenv(runEnv))
	if err != nil {
		return 0, fmt.Errorf("%s: %w", runEnv, err)
	}
	start := time.Unix(0, startNs)
	c := redis.NewClient(&redis.Options{Addr: os.Getenv("REDIS_ADDR"), ContextTimeoutEnabled: true})
	defer c.Close()
	key := os.Getenv(keyEnv)
	switch kind {
	case "limiter":
		return limiterWorker(c, key, start, run)
	case "quota":
		return quotaWorker(c, key, start, run)
	case "quota-reserve":
		// As an operator deployed it: a client that never retries and
		// dials within 50 ms.
		rc := redis.NewClient(&redis.Options{Addr: os.Getenv("REDIS_ADDR"), ContextTimeoutEnabled: true,
			MaxRetries: -1, DialTimeout: 50 * time.Millisecond})
		defer rc.Close()
		return quotaReserveWorker(rc, key, start, run)
	case "budget", "local-budget":
		load, err := strconv.Atoi(os.Getenv(loadEnv))
		if err != nil {
			return 0, fmt.Errorf("%s: %w", loadEnv, err)
		}
		// The recommended setting but for a floor of 10 retries a second
		// rather than 1, for the floor to show in a few seconds' outage:
		// it is the fleet's when shared, each replica's when not.
		var b retry.Budget
		if kind == "budget" {
			fb, err := fleet.NewBudget(c, key, fleet.WithLogger(quiet), fleet.WithSetting(floorSetting()))
			if err != nil {
				return 0, err
			}
			defer fb.Close()
			b = fb
		} else if b, err = budget.NewAdaptive(floorSetting()); err != nil {
			return 0, err
		}
		return budgetWorker(b, start, run, load)
	}
	return 0, fmt.Errorf("no worker %q", kind)
}

// floorSetting is the recommended setting but for a floor of outageFloor
// retries a second.
func floorSetting() budget.Setting {
	s := budget.DefaultSetting()
	s.Floor = outageFloor
	return s
}

// limiterWorker calls as fast as the shared limit lets it, from four
// goroutines, and returns how many calls were admitted before the end.
func limiterWorker(c *redis.Client, key string, start time.Time, run time.Duration) (int, error) {
	lim, err := fleet.NewLimiter(c, key, limitRate, limitBurst, fleet.WithLogger(quiet))
	if err != nil {
		return 0, err
	}
	r, err := ratelimit.New(core.RunnableFunc(func(context.Context, any, ...core.Option) (any, error) {
		return nil, nil
	}), lim, ratelimit.WithMeterProvider(mnoop.NewMeterProvider()))
	if err != nil {
		return 0, err
	}
	time.Sleep(time.Until(start))
	ctx, cancel := context.WithDeadline(context.Background(), start.Add(run))
	defer cancel()
	var admitted atomic.Int64
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			// A call refused because its turn would come after the end
			// ends the loop: every later turn comes later still.
			for {
				if _, err := r.Invoke(ctx, nil); err != nil {
					return
				}
				admitted.Add(1)
			}
		})
	}
	wg.Wait()
	if lim.Degraded() {
		return 0, errors.New("the limiter fell back to local decisions")
	}
	return int(admitted.Load()), nil
}

// errDown is the provider in a total outage.
type errDown struct{}

func (errDown) Error() string   { return "provider down (503)" }
func (errDown) Retryable() bool { return true }

// budgetWorker makes load calls a second, open loop, to a provider that
// is down, through a RetryRunnable with budget b, and returns the retries
// made.
func budgetWorker(b retry.Budget, start time.Time, run time.Duration, load int) (int, error) {
	var retries atomic.Int64
	down := core.RunnableFunc(func(ctx context.Context, _ any, _ ...core.Option) (any, error) {
		if info, _ := retry.AttemptFromContext(ctx); info.Attempt > 1 {
			retries.Add(1)
		}
		return nil, errDown{}
	})
	rr, err := retry.New(down, retry.RetryConfig{
		MaxRetries: 3, InitialBackoff: time.Millisecond, MaxBackoff: 10 * time.Millisecond,
		BackoffFactor: 2, Jitter: 0.2,
	}, retry.WithBudget(b), retry.WithTracerProvider(tnoop.NewTracerProvider()),
		retry.WithMeterProvider(mnoop.NewMeterProvider()))
	if err != nil {
		return 0, err
	}
	time.Sleep(time.Until(start))
	tick := time.NewTicker(time.Second / time.Duration(load))
	defer tick.Stop()
	end := time.After(run)
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		select {
		case <-end:
			wg.Wait()
			return int(retries.Load()), nil
		case <-tick.C:
			wg.Go(func() { _, _ = rr.Invoke(context.Background(), nil) })
		}
	}
}

// Four processes draw from one limit for three seconds: together they are
// admitted what the limit allows, within 5 %.
func TestFourProcessesShareOneLimit(t *testing.T) {
	client(t) // skips or fails without Redis
	key := uniqueKey(t)
	run := 3 * time.Second
	got := startWorkers(t, 4, "limiter", key, run, 0)
	want := limitBurst + limitRate*run.Seconds()
	t.Logf("4 processes admitted %d calls in %v; the limit allows %.0f", got, run, want)
	if d := (float64(got) - want) / want; d > 0.05 || d < -0.05 {
		t.Errorf("admitted %d, %+.1f %% off the limit's %.0f; want within 5 %%", got, 100*d, want)
	}
}

// Four processes in a total outage, each with its own share of the load,
// retry about as much through one shared Budget as one process carrying
// the whole load through one budget; four budgets that do not share keep
// four floors' worth of retries going.
func TestFourProcessesShareOneBudgetInOutage(t *testing.T) {
	client(t) // skips or fails without Redis
	run := 4 * time.Second
	shared := startWorkers(t, 4, "budget", uniqueKey(t), run, 50)
	one := startWorkers(t, 1, "local-budget", "", run, 200)
	apart := startWorkers(t, 4, "local-budget", "", run, 50)
	t.Logf("retries in a %v outage at 200 calls/s: 4 processes sharing a fleet budget %d, "+
		"1 process with one budget %d, 4 processes with a budget each %d", run, shared, one, apart)
	// The shared budget learns of the other replicas a sync late (100 ms):
	// some retries more than one process.
	if limit := one + one/2; shared > limit {
		t.Errorf("the fleet made %d retries; want at most %d, as for one process sharing one budget (%d)", shared, limit, one)
	}
	// Apart, each replica keeps its own floor: three floors more, for the
	// seconds after the budgets learnt (a quarter of them discounted).
	if extra := int(3 * outageFloor * run.Seconds() * 3 / 4); apart < shared+extra {
		t.Errorf("four budgets apart made %d retries, the shared one %d; want at least %d more apart", apart, shared, extra)
	}
}
