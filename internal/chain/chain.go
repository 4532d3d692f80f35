// Package chain follows a chain of decorators through their Unwrap
// methods, as errors.As follows Unwrap through an error's chain.
package chain

// Find returns the first Runnable in r's chain that is a T: r itself,
// else what r's Unwrap returns, and so on. It reports false when none is.
// R is core.Runnable, named by the caller (a concrete R would stop at
// the first Unwrap); the package does not import core, which uses it.
func Find[T any, R comparable](r R) (T, bool) {
	var zero R
	for r != zero {
		if t, ok := any(r).(T); ok {
			return t, true
		}
		w, ok := any(r).(interface{ Unwrap() R })
		if !ok {
			break
		}
		r = w.Unwrap()
	}
	var none T
	return none, false
}
