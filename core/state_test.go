package core_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"

	"github.com/steadfast-go/steadfast/core"
)

func TestStateRemembersByKeyIdentity(t *testing.T) {
	ctx := core.WithState(t.Context(), new(core.State))
	a, b := core.NewStateKey[int](""), core.NewStateKey[int]("")
	if _, ok := a.Load(ctx); ok {
		t.Fatal("Load on an empty State: ok = true")
	}
	a.Store(ctx, 1)
	b.Store(ctx, 2)
	if got, ok := a.Load(ctx); !ok || got != 1 {
		t.Errorf("Load(a) = %v, %v, want 1: keys of one type must not share an entry", got, ok)
	}
	if got, ok := b.Load(ctx); !ok || got != 2 {
		t.Errorf("Load(b) = %v, %v, want 2", got, ok)
	}
}

func TestOutsideACallNothingIsRemembered(t *testing.T) {
	k := core.NewStateKey[string]("k")
	ctx := t.Context()
	k.Store(ctx, "x") // no panic
	if _, ok := k.Load(ctx); ok {
		t.Error("Load outside a call: ok = true")
	}
	if s := core.StateFrom(context.Background()); s != nil {
		t.Errorf("StateFrom(Background) = %v, want nil outside a call", s)
	}
}

// The requests of one call (a hedge's, a Batch's) share its State: keys
// stored at once, from many goroutines, are all there after.
func TestStateStoresConcurrently(t *testing.T) {
	ctx := core.WithState(t.Context(), new(core.State))
	keys := make([]*core.StateKey[int], 64)
	var wg sync.WaitGroup
	for i := range keys {
		keys[i] = core.NewStateKey[int]("")
		wg.Go(func() { keys[i].Store(ctx, i) })
	}
	wg.Wait()
	for i, k := range keys {
		if got, ok := k.Load(ctx); !ok || got != i {
			t.Errorf("key %d: Load = %v, %v after concurrent Stores, want %d", i, got, ok, i)
		}
	}
}

// Named entries survive a process: written by MarshalJSON, read back by
// UnmarshalJSON, and answered to a key of the same name; unnamed ones
// stay in memory.
func TestNamedEntriesRoundTrip(t *testing.T) {
	type owner struct {
		Deployment string
		Seq        int
	}
	var s core.State
	ctx := core.WithState(t.Context(), &s)
	core.NewStateKey[owner]("pool.owner").Store(ctx, owner{"eastus", 7})
	core.NewStateKey[string]("").Store(ctx, "in memory only")
	data, err := json.Marshal(&s)
	if err != nil {
		t.Fatal(err)
	}
	if string(data) != `{"pool.owner":{"Deployment":"eastus","Seq":7}}` {
		t.Errorf("MarshalJSON = %s, want the named entry only", data)
	}
	var back core.State
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	backCtx := core.WithState(t.Context(), &back)
	if got, ok := core.NewStateKey[owner]("pool.owner").Load(backCtx); !ok || got != (owner{"eastus", 7}) {
		t.Errorf("Load after a round trip = %v, %v, want {eastus 7}", got, ok)
	}
	// Not yet asked for entries are written again as they came.
	var again core.State
	_ = json.Unmarshal(data, &again)
	if data2, _ := json.Marshal(&again); string(data2) != string(data) {
		t.Errorf("MarshalJSON of a State read back = %s, want %s", data2, data)
	}
	// An entry of another shape answers as if none.
	if _, ok := core.NewStateKey[int]("pool.owner").Load(backCtx); ok {
		t.Error("Load of a named entry with the wrong type: ok = true")
	}
	if err := json.Unmarshal([]byte(`[1]`), &back); err == nil {
		t.Error("UnmarshalJSON of an array: no error")
	}
}

// A decorator remembers what it learns about one call in that call's
// State: here, which of its candidates served a stream, so that a Resume
// of the same call goes back to it.
func ExampleState() {
	served := core.NewStateKey[string]("example.served")         // one per decorator instance
	ctx := core.WithState(context.Background(), new(core.State)) // what a retry layer does for every call

	// In the call's first attempt:
	served.Store(ctx, "eastus")
	// In a later attempt of the same call:
	name, ok := served.Load(ctx)
	fmt.Println(name, ok)

	// A state a later process needs is read out, and given back there.
	data, _ := json.Marshal(core.StateFrom(ctx))
	fmt.Println(string(data))
	var back core.State
	_ = json.Unmarshal(data, &back)
	later := core.WithState(context.Background(), &back)
	name, _ = core.NewStateKey[string]("example.served").Load(later)
	fmt.Println(name)
	// Output:
	// eastus true
	// {"example.served":"eastus"}
	// eastus
}

type resumable struct{ core.RunnableFunc }

func (resumable) Resume(context.Context, any, any, ...core.Option) (<-chan any, error) {
	return nil, nil
}

func (resumable) CanResume(context.Context) bool { return true }

// A Runnable says whether it resumes; core adds nothing to its answer.
func TestAResumerAnswersForItself(t *testing.T) {
	var r core.Runnable = resumable{}
	res, ok := r.(core.Resumer)
	if !ok || !res.CanResume(t.Context()) {
		t.Errorf("a Resumer: CanResume = false")
	}
	if _, ok := core.Runnable(core.RunnableFunc(nil)).(core.Resumer); ok {
		t.Errorf("a RunnableFunc is a Resumer")
	}
}
