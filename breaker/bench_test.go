package breaker_test

import (
	"context"
	"testing"

	"github.com/steadfast-go/steadfast/internal/mock"
)

// BenchmarkInvokeConcurrent is a closed circuit under about 1 000
// concurrent callers: each call takes gobreaker's lock once to be admitted
// and once to be reported.
func BenchmarkInvokeConcurrent(b *testing.B) {
	inner := mock.New(mock.OK("ok"))
	br := newBreaker(b, inner)
	b.SetParallelism(500) // × GOMAXPROCS goroutines
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		ctx := context.Background()
		for pb.Next() {
			_, _ = br.Invoke(ctx, "q")
		}
	})
}
