package llmhttp_test

import (
	"testing"

	"github.com/steadfast-go/steadfast/llmhttp"
)

func TestFitOutput(t *testing.T) {
	for _, tc := range []struct {
		o       llmhttp.Overflow
		current int
		want    int
		ok      bool
	}{
		{llmhttp.Overflow{Limit: 128000, Input: 126532, Output: 4000, Requested: 130532}, 0, 1468, true},
		{llmhttp.Overflow{Limit: 30000, Requested: 45000}, 20000, 5000, true},               // the TPM 429: the request's own limit
		{llmhttp.Overflow{Limit: 30000, Requested: 45000}, 0, 0, false},                     // no output limit known
		{llmhttp.Overflow{Limit: 30000, Requested: 45000}, 15000, 0, false},                 // nothing left
		{llmhttp.Overflow{Limit: 200000, Input: 208451, Requested: 208451}, 4096, 0, false}, // the input alone
	} {
		if got, ok := tc.o.FitOutput(tc.current); got != tc.want || ok != tc.ok {
			t.Errorf("%+v.FitOutput(%d) = %d, %v; want %d, %v", tc.o, tc.current, got, ok, tc.want, tc.ok)
		}
	}
}
