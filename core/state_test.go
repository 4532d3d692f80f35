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
	var s core.State
	a, b := core.NewStateKey[int](""), core.NewStateKey[int]("")
	if _, ok := core.Load(&s, a); ok {
		t.Fatal("Load on an empty State: ok = true")
	}
	core.Store(&s, a, 1)
	core.Store(&s, b, 2)
	if got, ok := core.Load(&s, a); !ok || got != 1 {
		t.Errorf("Load(a) = %v, %v, want 1: keys of one type must not share an entry", got, ok)
	}
	if got := core.Update(&s, b, func(v int) int { return v + 40 }); got != 42 {
		t.Errorf("Update(b) = %d, want 42", got)
	}
}

func TestANilStateRemembersNothing(t *testing.T) {
	k := core.NewStateKey[string]("k")
	core.Store(nil, k, "x") // no panic
	if _, ok := core.Load(nil, k); ok {
		t.Error("Load(nil) ok = true")
	}
	if got := core.Update(nil, k, func(v string) string { return v + "y" }); got != "y" {
		t.Errorf("Update(nil) = %q, want f of the zero value, y", got)
	}
	if s := core.StateFrom(context.Background()); s != nil {
		t.Errorf("StateFrom(Background) = %v, want nil outside a call", s)
	}
}

func TestStateUpdatesAtOnce(t *testing.T) {
	var s core.State
	k := core.NewStateKey[uint64]("")
	var wg sync.WaitGroup
	for i := range 64 {
		wg.Go(func() { core.Update(&s, k, func(m uint64) uint64 { return m | 1<<i }) })
	}
	wg.Wait()
	if got, _ := core.Load(&s, k); got != ^uint64(0) {
		t.Errorf("after 64 concurrent Updates: %b, want every bit", got)
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
	core.Store(&s, core.NewStateKey[owner]("pool.owner"), owner{"eastus", 7})
	core.Store(&s, core.NewStateKey[string](""), "in memory only")
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
	if got, ok := core.Load(&back, core.NewStateKey[owner]("pool.owner")); !ok || got != (owner{"eastus", 7}) {
		t.Errorf("Load after a round trip = %v, %v, want {eastus 7}", got, ok)
	}
	// Not yet asked for entries are written again as they came.
	var again core.State
	_ = json.Unmarshal(data, &again)
	if data2, _ := json.Marshal(&again); string(data2) != string(data) {
		t.Errorf("MarshalJSON of a State read back = %s, want %s", data2, data)
	}
	// An entry of another shape answers as if none.
	if _, ok := core.Load(&back, core.NewStateKey[int]("pool.owner")); ok {
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
	core.Store(core.StateFrom(ctx), served, "eastus")
	// In a later attempt of the same call:
	name, ok := core.Load(core.StateFrom(ctx), served)
	fmt.Println(name, ok)

	// A state a later process needs is read out, and given back there.
	data, _ := json.Marshal(core.StateFrom(ctx))
	fmt.Println(string(data))
	var back core.State
	_ = json.Unmarshal(data, &back)
	name, _ = core.Load(&back, core.NewStateKey[string]("example.served"))
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

type resumingWrapper struct{ wrapper }

func (resumingWrapper) Resume(context.Context, any, any, ...core.Option) (<-chan any, error) {
	return nil, nil
}

type checker struct {
	resumingWrapper
	can bool
}

func (c checker) CanResume(context.Context) bool { return c.can }

func TestCanResumeFollowsTheChain(t *testing.T) {
	leaf := resumable{core.RunnableFunc(func(context.Context, any, ...core.Option) (any, error) { return nil, nil })}
	for name, tc := range map[string]struct {
		r    core.Runnable
		want bool
	}{
		"a Resumer":                              {leaf, true},
		"a Runnable without Resume":              {leaf.RunnableFunc, false},
		"a resuming wrapper of a Resumer":        {resumingWrapper{wrapper{leaf}}, true},
		"a resuming wrapper of a non-Resumer":    {resumingWrapper{wrapper{leaf.RunnableFunc}}, false},
		"a wrapper without Resume of a Resumer":  {wrapper{leaf}, false},
		"a checker that says no, over a Resumer": {checker{resumingWrapper{wrapper{leaf}}, false}, false},
		"a checker that says yes":                {checker{resumingWrapper{wrapper{leaf.RunnableFunc}}, true}, true},
		"nil":                                    {nil, false},
	} {
		if got := core.CanResume(tc.r); got != tc.want {
			t.Errorf("CanResume(%s) = %v, want %v", name, got, tc.want)
		}
	}
}
