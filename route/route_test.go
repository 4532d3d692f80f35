package route_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"

	"go.opentelemetry.io/otel/metric/noop"
	tnoop "go.opentelemetry.io/otel/trace/noop"
	"go.uber.org/goleak"

	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/fallback"
	"github.com/steadfast-go/steadfast/internal/mock"
	"github.com/steadfast-go/steadfast/pool"
	"github.com/steadfast-go/steadfast/retry"
	"github.com/steadfast-go/steadfast/route"
)

// calls notes which deployment each call reached.
type calls struct {
	mu  sync.Mutex
	got []string
}

func (c *calls) model(name string, err error) core.Runnable {
	return mock.Named(name, core.RunnableFunc(func(context.Context, any, ...core.Option) (any, error) {
		c.mu.Lock()
		c.got = append(c.got, name)
		c.mu.Unlock()
		if err != nil {
			return nil, err
		}
		return name, nil
	}))
}

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func newPool(t *testing.T, ds ...pool.Deployment) *pool.Runnable {
	t.Helper()
	p, err := pool.New(ds, pool.WithMeterProvider(noop.NewMeterProvider()))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func newFallback(t *testing.T, cands ...core.Runnable) *fallback.Runnable {
	t.Helper()
	f, err := fallback.New(cands, fallback.WithMeterProvider(noop.NewMeterProvider()), fallback.WithTracerProvider(tnoop.NewTracerProvider()))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// A pool and a fallback call only the candidates that meet a call's
// constraints, and a call with none goes everywhere as before.
func TestOnlyTheCandidatesThatMeetTheConstraintsAreCalled(t *testing.T) {
	var c calls
	p := newPool(t,
		pool.Deployment{Name: "eu-1", Runnable: route.Tag(c.model("eu-1", nil), 2, "region:eu", "zdr")},
		pool.Deployment{Name: "us-1", Runnable: route.Tag(c.model("us-1", nil), 1, "region:us")})
	f := newFallback(t, route.Tag(c.model("claude", &mock.HTTPError{Code: 503}), 3, "region:us"), p)
	for _, tc := range []struct {
		name string
		c    route.Constraints
		want string // every call answered by
	}{
		{"require", route.Constraints{Require: []string{"region:eu"}}, "eu-1"},
		{"exclude", route.Constraints{Exclude: []string{"region:us"}}, "eu-1"},
		{"max price", route.Constraints{MaxPrice: 1.5}, "us-1"},
	} {
		c.got = nil
		ctx := route.With(context.Background(), tc.c)
		for range 20 {
			out, err := f.Invoke(ctx, "q")
			if err != nil || out != tc.want {
				t.Fatalf("%s: Invoke() = %v, %v; want %s", tc.name, out, err, tc.want)
			}
		}
		for _, name := range c.got {
			if name != tc.want && !(tc.c.MaxPrice == 0 && name == "claude") {
				t.Errorf("%s: %s was called, want only %s (and claude when it passes)", tc.name, name, tc.want)
			}
		}
	}
}

// Order puts the candidates it names first: a pool's deployments by
// Name, a fallback's candidates by their Runnable's name.
func TestOrderComesFirst(t *testing.T) {
	var c calls
	p := newPool(t,
		pool.Deployment{Name: "eu-1", Runnable: route.Tag(c.model("eu-1", nil), 0, "region:eu")},
		pool.Deployment{Name: "us-1", Runnable: route.Tag(c.model("us-1", nil), 0, "region:us")})
	f := newFallback(t, c.model("claude", nil), c.model("gpt", nil))
	for _, tc := range []struct {
		r     core.Runnable
		order string
	}{{p, "us-1"}, {p, "eu-1"}, {f, "gpt"}, {f, "claude"}} {
		ctx := route.With(context.Background(), route.Constraints{Order: []string{"nowhere", tc.order}})
		for range 20 {
			if out, err := tc.r.Invoke(ctx, "q"); err != nil || out != tc.order {
				t.Fatalf("%T, Order %s: Invoke() = %v, %v; want %s", tc.r, tc.order, out, err, tc.order)
			}
		}
	}
}

// A filter that leaves no candidate fails at once with an *Error naming
// the constraint, no provider asked; so does a constraint no candidate
// could ever meet (a mistyped tag, a price no candidate has), and a
// price or tag a router cannot judge by is New's error.
func TestAConstraintNoCandidateMeetsFailsAtOnce(t *testing.T) {
	var c calls
	p := newPool(t,
		pool.Deployment{Name: "eu-1", Runnable: route.Tag(c.model("eu-1", nil), 0, "region:eu")},
		pool.Deployment{Name: "us-1", Runnable: route.Tag(c.model("us-1", nil), 0, "region:us", "zdr")})
	f := newFallback(t, p, c.model("untagged", nil))
	for _, tc := range []struct {
		c    route.Constraints
		want string
	}{
		{route.Constraints{Require: []string{"region:eu", "zdr"}}, "require zdr"},
		{route.Constraints{Require: []string{"regoin:eu"}}, `tag "regoin:eu": no candidate carries it`},
		{route.Constraints{MaxPrice: 5}, "no candidate has a price"},
		{route.Constraints{MaxPrice: -1}, "must be a finite number"},
	} {
		for _, r := range []core.Runnable{p, f} {
			_, err := r.Invoke(route.With(context.Background(), tc.c), "q")
			var re *route.Error
			if !errors.As(err, &re) || !strings.Contains(err.Error(), tc.want) || retry.IsRetryable(err) || !re.Local() {
				t.Errorf("%T, %+v: error %v, want a *route.Error naming %q", r, tc.c, err, tc.want)
			}
		}
	}
	if len(c.got) != 0 {
		t.Errorf("providers called %v, want none", c.got)
	}
	for _, bad := range []core.Runnable{route.Tag(c.model("x", nil), -1, "a"), route.Tag(c.model("x", nil), 1, "")} {
		if _, err := pool.New([]pool.Deployment{{Name: "x", Runnable: bad}}); err == nil {
			t.Errorf("pool.New() with a bad tag or price: error nil")
		}
		if _, err := fallback.New([]core.Runnable{bad}); err == nil {
			t.Errorf("fallback.New() with a bad tag or price: error nil")
		}
	}
}

// NoFallback keeps a fallback to its first candidate that passes, and a
// pool given an Order to the deployments it names.
func TestNoFallback(t *testing.T) {
	var c calls
	p := newPool(t,
		pool.Deployment{Name: "a", Runnable: route.Tag(c.model("a", &mock.HTTPError{Code: 503}), 0, "x")},
		pool.Deployment{Name: "b", Runnable: route.Tag(c.model("b", nil), 0, "x")})
	f := newFallback(t, route.Tag(c.model("first", &mock.HTTPError{Code: 503}), 0, "x"), route.Tag(c.model("second", nil), 0, "x"))
	ctx := route.With(context.Background(), route.Constraints{NoFallback: true, Order: []string{"a"}})
	for range 5 {
		if _, err := p.Invoke(ctx, "q"); err == nil {
			t.Fatal("pool, NoFallback with Order a: Invoke() answered, want a's failure")
		}
		if _, err := f.Invoke(ctx, "q"); err == nil {
			t.Fatal("fallback, NoFallback: Invoke() answered, want the first candidate's failure")
		}
	}
	slices.Sort(c.got)
	if got := slices.Compact(c.got); !slices.Equal(got, []string{"a", "first"}) {
		t.Errorf("called %v, want only a and first", got)
	}
}
