package core

// Option is a call option. It is a key and a value: core defines a few
// (WithOperation, WithMaxConcurrency), and any package can define its own with
// NewOption and read them with Lookup, without changes to core. Decorators
// pass options through to the inner Runnable unchanged.
type Option struct {
	key   any
	value any
}

// NewOption returns an Option that associates value with key. Keys follow the
// rules of context keys: use an unexported type of your own package so that
// options of different packages never collide.
func NewOption(key, value any) Option {
	return Option{key: key, value: value}
}

// Lookup returns the value of the last option in opts with the given key and
// type T. It reports false when no option has that key or its value is not a T.
func Lookup[T any](opts []Option, key any) (T, bool) {
	for i := len(opts) - 1; i >= 0; i-- {
		if opts[i].key == key {
			v, ok := opts[i].value.(T)
			return v, ok
		}
	}
	var zero T
	return zero, false
}

type operationKey struct{}

type maxConcurrencyKey struct{}

// WithOperation names the operation of one call ("llm.chat", "retriever").
// Decorators use the name to choose a per-operation policy and to label
// telemetry. It takes precedence over the Runnable's Name.
func WithOperation(name string) Option {
	return Option{key: operationKey{}, value: name}
}

// OperationFrom returns the operation named by the last WithOperation in opts,
// or "" when there is none.
func OperationFrom(opts ...Option) string {
	name, _ := Lookup[string](opts, operationKey{})
	return name
}

// WithMaxConcurrency bounds how many items of a Batch run at once. Values
// below 1 mean no bound.
func WithMaxConcurrency(n int) Option {
	return Option{key: maxConcurrencyKey{}, value: n}
}

// maxConcurrencyFrom returns the bound set by WithMaxConcurrency, or 0 (no
// bound) when there is none.
func maxConcurrencyFrom(opts []Option) int {
	n, _ := Lookup[int](opts, maxConcurrencyKey{})
	return max(n, 0)
}
