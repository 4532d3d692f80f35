package fleet

import "testing"

// A return must be in its bucket's Redis Cluster slot, for one script to
// touch both.
func TestReturnKeySharesTheBucketsSlot(t *testing.T) {
	for key, want := range map[string]string{
		"steadfast:limit:gpt":         "{steadfast:limit:gpt}:return",
		"steadfast:limit:{tenant}gpt": "steadfast:limit:{tenant}gpt:return",
		"steadfast:limit:{gpt":        "{steadfast:limit:{gpt}:return",
		"steadfast:limit:{}gpt":       "",
		"steadfast:limit:a}b":         "",
	} {
		got, ok := returnKey(key)
		if got != want || ok != (want != "") {
			t.Errorf("returnKey(%q) = %q, %v; want %q", key, got, ok, want)
		}
	}
}
