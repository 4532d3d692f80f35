package pool_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/internal/mock"
	"github.com/steadfast-go/steadfast/llmhttp"
	"github.com/steadfast-go/steadfast/pool"
	"github.com/steadfast-go/steadfast/retry"
)

// deadFailures are failures that say a deployment cannot serve at all, as
// the provider adapters deliver them.
var deadFailures = map[string]error{
	"401":                        &mock.HTTPError{Code: 401},
	"402":                        &mock.HTTPError{Code: 402},
	"403":                        &mock.HTTPError{Code: 403},
	"404":                        &mock.HTTPError{Code: 404},
	"insufficient_quota":         llmhttp.Classify(&llmhttp.APIError{Status: 429, Code: "insufficient_quota", Err: errors.New("quota"), Dead: true}, nil, ""),
	"billing_hard_limit_reached": llmhttp.Classify(&llmhttp.APIError{Status: 400, Code: "billing_hard_limit_reached", Err: errors.New("billing"), Dead: true}, nil, ""),
	"a user's adapter":           cannotServe{},
}

// cannotServe is a user's own adapter's error that says, through the
// error protocol, that its key cannot serve.
type cannotServe struct{}

func (cannotServe) Error() string     { return "key revoked" }
func (cannotServe) CannotServe() bool { return true }

// The pool knows no provider's codes: an error whose code reads like an
// exhausted quota, but whose adapter does not say the deployment cannot
// serve, is a rate limit like any other.
func TestThePoolReadsTheProtocolNotTheCodes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		looksDead := &llmhttp.APIError{Status: 429, Code: "insufficient_quota", Err: errors.New("quota")}
		p, bad, good := deadPair(t, looksDead)
		for range 2 {
			if out, err := retried(t, p).Invoke(t.Context(), "q"); err != nil || out != "good" {
				t.Fatalf("Invoke() = %v, %v, want good after a retry", out, err)
			}
		}
		if bad.CallCount() != 2 || good.CallCount() != 2 {
			t.Errorf("calls: %d to the deployment that answered 429, %d to the other; want 2 and 2: no death, it stays in rotation",
				bad.CallCount(), good.CallCount())
		}
	})
}

// deadPair is a pool of a deployment that answers failure and one that
// serves, with affinity to the first so that every call tries it first.
func deadPair(t *testing.T, failure error, serves ...mock.Result) (p *pool.Runnable, bad, good *mock.Runnable) {
	t.Helper()
	key := keyFor(t, "bad", "bad", "good")
	if len(serves) == 0 {
		serves = []mock.Result{mock.OK("good")}
	}
	bad, good = mock.New(mock.Fail(failure)), mock.New(serves...)
	p = newPool(t, []pool.Deployment{{Name: "bad", Runnable: bad}, {Name: "good", Runnable: good}},
		pool.WithAffinity(func(context.Context, any) string { return key }))
	return p, bad, good
}

// A deployment that answers 401, 402, 403, 404 or an exhausted quota or
// billing is taken out of rotation, and the call goes on at once to
// another, spending no retry.
func TestADeadDeploymentIsLeftWithoutARetry(t *testing.T) {
	for name, failure := range deadFailures {
		synctest.Test(t, func(t *testing.T) {
			p, bad, good := deadPair(t, failure)
			retries := 0
			r := retried(t, p, retry.WithOnRetry(func(context.Context, retry.RetryEvent) { retries++ }))
			start := time.Now()
			for range 3 {
				if out, err := r.Invoke(t.Context(), "q"); err != nil || out != "good" {
					t.Fatalf("%s: Invoke() = %v, %v, want good", name, out, err)
				}
			}
			if retries != 0 || bad.CallCount() != 1 || good.CallCount() != 3 || time.Since(start) != 0 {
				t.Errorf("%s: %d retries, %d calls to the dead deployment, %d to the other, %v slept; want 0, 1 (it is out of rotation), 3, none",
					name, retries, bad.CallCount(), good.CallCount(), time.Since(start))
			}
		})
	}
}

// 400, 413 and 422 are the request's fault: no deployment dies, and the
// call ends as the retry layer's rules say.
func TestTheRequestsFaultKillsNoDeployment(t *testing.T) {
	for _, code := range []int{400, 413, 422} {
		synctest.Test(t, func(t *testing.T) {
			p, bad, good := deadPair(t, &mock.HTTPError{Code: code})
			_, err := retried(t, p).Invoke(t.Context(), "q")
			if re, ok := errors.AsType[*retry.Error](err); !ok || re.Outcome != retry.OutcomeNotRetryable || good.CallCount() != 0 {
				t.Fatalf("%d: Invoke() = %v, %d calls to the other; want not_retryable, none", code, err, good.CallCount())
			}
			_, _ = retried(t, p).Invoke(t.Context(), "q")
			if bad.CallCount() != 2 {
				t.Errorf("%d: calls to the deployment = %d, want 2: it stays in rotation", code, bad.CallCount())
			}
		})
	}
}

// When every deployment is dead, the pool's refusal names each and why,
// and is not retried.
func TestEveryDeploymentDeadNamesEach(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		east, west := mock.New(mock.Fail(&mock.HTTPError{Code: 401})), mock.New(mock.Fail(deadFailures["insufficient_quota"]))
		p := newPool(t, []pool.Deployment{{Name: "eastus", Runnable: east}, {Name: "westeu", Runnable: west}},
			pool.WithDeadCooldown(time.Minute))
		_, err := retried(t, p).Invoke(t.Context(), "q")
		re, ok := errors.AsType[*retry.Error](err)
		ue, isPool := errors.AsType[*pool.UnavailableError](err)
		if !ok || re.Outcome != retry.OutcomeNotRetryable || re.Attempts != 1 || !isPool {
			t.Fatalf("Invoke() = %v, want not_retryable after 1 attempt, a *pool.UnavailableError", err)
		}
		msg := err.Error()
		for _, want := range []string{"eastus dead: 401", "westeu dead: 429 insufficient_quota", "1m0s"} {
			if !strings.Contains(msg, want) {
				t.Errorf("error %q does not say %q", msg, want)
			}
		}
		if len(ue.Deployments) != 2 || !ue.Deployments[0].Dead || ue.Retryable() {
			t.Errorf("UnavailableError = %+v, want both dead, not retryable", ue)
		}

		// Within the dead cooldown nothing is called; once it is over,
		// both are tried again.
		time.Sleep(59 * time.Second)
		_, _ = p.Invoke(t.Context(), "q")
		if east.CallCount() != 1 || west.CallCount() != 1 {
			t.Errorf("within WithDeadCooldown: calls %d and %d, want 1 and 1", east.CallCount(), west.CallCount())
		}
		time.Sleep(time.Second)
		_, _ = p.Invoke(t.Context(), "q")
		if east.CallCount() != 2 || west.CallCount() != 2 {
			t.Errorf("after WithDeadCooldown: calls %d and %d, want 2 and 2", east.CallCount(), west.CallCount())
		}
	})
}

// A stream's creation and a Batch's items move on from a dead deployment
// too, spending no retry.
func TestStreamAndBatchLeaveADeadDeployment(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p, bad, _ := deadPair(t, &mock.HTTPError{Code: 403}, mock.Stream(nil, "good"))
		retries := 0
		r := retried(t, p, retry.WithOnRetry(func(context.Context, retry.RetryEvent) { retries++ }))
		ch, err := r.Stream(t.Context(), "q")
		if err != nil {
			t.Fatal(err)
		}
		if got := mock.Drain(ch); len(got) != 1 || got[0] != "good" {
			t.Errorf("Stream = %v, want good", got)
		}

		p2, bad2, _ := deadPair(t, &mock.HTTPError{Code: 404})
		r2 := retried(t, p2, retry.WithOnRetry(func(context.Context, retry.RetryEvent) { retries++ }))
		outs, err := r2.Batch(t.Context(), []any{"a", "b", "c"})
		if err != nil || fmt.Sprint(outs) != "[good good good]" {
			t.Errorf("Batch = %v, %v, want good three times", outs, err)
		}
		if retries != 0 || bad.CallCount() != 1 || bad2.CallCount() != 1 {
			t.Errorf("%d retries, calls to the dead deployments %d and %d; want 0, 1 and 1", retries, bad.CallCount(), bad2.CallCount())
		}
	})
}

// slowlyDead is a key revoked, whose adapter takes a second to say so.
type slowlyDead struct{ cannotServe }

func (slowlyDead) CannotServe() bool { time.Sleep(time.Second); return true }

// A stream whose error value says its deployment is dead has taken that
// deployment out of rotation by the time the consumer has the value: a
// call made at once goes elsewhere.
func TestAStreamsDeathIsKnownBeforeTheConsumerHasIt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		key := keyFor(t, "bad", "bad", "good")
		bad, good := mock.New(mock.Stream(slowlyDead{})), mock.New(mock.Stream(nil, "good"))
		p := newPool(t, []pool.Deployment{{Name: "bad", Runnable: bad}, {Name: "good", Runnable: good}},
			pool.WithAffinity(func(context.Context, any) string { return key }))
		ch, err := p.Stream(t.Context(), "q")
		if err != nil {
			t.Fatal(err)
		}
		if v := <-ch; !errors.As(v.(error), new(slowlyDead)) {
			t.Fatalf("first stream's value = %v, want its error value", v)
		}
		// No wait for the first stream's close: a retry would not wait.
		ch2, err := p.Stream(t.Context(), "q")
		if err != nil {
			t.Fatal(err)
		}
		if got := mock.Drain(ch2); len(got) != 1 || got[0] != "good" || bad.CallCount() != 1 || good.CallCount() != 1 {
			t.Errorf("second stream = %v, calls %d and %d; want good from the live deployment", got, bad.CallCount(), good.CallCount())
		}
		mock.Drain(ch)
	})
}

func TestWithDeadCooldownRejectsNonPositive(t *testing.T) {
	_, err := pool.New([]pool.Deployment{{Name: "a", Runnable: core.RunnableFunc(func(context.Context, any, ...core.Option) (any, error) { return nil, nil })}},
		pool.WithDeadCooldown(0))
	if err == nil || !strings.Contains(err.Error(), "WithDeadCooldown") {
		t.Errorf("New(WithDeadCooldown(0)) error = %v, want one naming WithDeadCooldown", err)
	}
}
