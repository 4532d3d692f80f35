package fleet

import (
	"context"
	"testing"
	"time"

	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/ratelimit"
)

type overloaded struct{}

func (overloaded) Error() string   { return "429 too many requests" }
func (overloaded) StatusCode() int { return 429 }

// A cut made by one replica's exchange reaches the others through their
// subscription, not at their next tick: with ticks an hour apart, b
// takes its share of the cut limit as soon as a's 429 has cut it.
func TestACutReachesEveryReplicaAtOnce(t *testing.T) {
	rc := testRedis(t)
	defer func(d time.Duration) { syncEvery = d }(syncEvery)
	syncEvery = time.Hour

	key := "cuts-" + time.Now().Format("150405.000000000")
	over := core.RunnableFunc(func(context.Context, any, ...core.Option) (any, error) { return nil, overloaded{} })
	ok := core.RunnableFunc(func(context.Context, any, ...core.Option) (any, error) { return "ok", nil })
	a, err := NewConcurrency(rc, key, over, ratelimit.ConcurrencyConfig{Initial: 20})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := NewConcurrency(rc, key, ok, ratelimit.ConcurrencyConfig{Initial: 20})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if limit, epoch, _ := b.s.Share(); limit != 10 || epoch != 0 {
		t.Fatalf("b's share %v at epoch %d; want 10 of 20 between two, no cut yet", limit, epoch)
	}
	if _, err := a.Invoke(t.Context(), "q"); err == nil {
		t.Fatal("a 429 answered nil")
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		limit, epoch, _ := b.s.Share()
		if limit == 7 && epoch == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("b's share %v at epoch %d 5s after a's 429; want 7 at epoch 1: the fleet's 20 cut to 14, between two", limit, epoch)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
