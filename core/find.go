package core

// Find returns the first Runnable in r's chain that is a T: r itself, else
// what r's Unwrap() Runnable returns, and so on, as errors.As follows an
// error's Unwrap. It reports false when none is. A program finds a
// decorator it built deep in a chain (a breaker, to read its state) with
// it; NameOf and IsIdempotent are built on it.
func Find[T any](r Runnable) (T, bool) {
	for r != nil {
		if t, ok := r.(T); ok {
			return t, true
		}
		w, ok := r.(interface{ Unwrap() Runnable })
		if !ok {
			break
		}
		r = w.Unwrap()
	}
	var none T
	return none, false
}
