package recent

import (
	"strconv"
	"testing"
)

func TestMapForgetsTheOldest(t *testing.T) {
	var m Map[int]
	for i := range Size + 1 {
		m.Set(strconv.Itoa(i), i)
	}
	if _, ok := m.Get("0"); ok {
		t.Error("Get(oldest) ok = true past Size, want forgotten")
	}
	if v, ok := m.Get(strconv.Itoa(Size)); !ok || v != Size {
		t.Errorf("Get(newest) = %d, %v, want %d", v, ok, Size)
	}
	m.Set("x", 1)
	m.Update("x", func(v int) int { return v + 1 })
	if v, _ := m.Get("x"); v != 2 {
		t.Errorf("Get(x) after Set and Update = %d, want 2", v)
	}
}
