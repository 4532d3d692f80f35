package retry

import (
	"context"

	"github.com/steadfast-go/steadfast/core"
)

func (r *RetryRunnable) Batch(ctx context.Context, inputs []any, opts ...core.Option) ([]any, error) {
	return r.inner.Batch(ctx, inputs, opts...)
}

func (r *RetryRunnable) Stream(ctx context.Context, input any, opts ...core.Option) (<-chan any, error) {
	return r.inner.Stream(ctx, input, opts...)
}
