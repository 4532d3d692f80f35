package core

// Middleware decorates a Runnable: retry, rate limiting and circuit breaking
// are all Middleware.
type Middleware func(Runnable) Runnable

// Chain wraps r in the given middleware. The first middleware is the
// outermost: Chain(r, a, b) returns a(b(r)), so a call passes a, then b, then
// reaches r. Nil middleware are skipped.
func Chain(r Runnable, mw ...Middleware) Runnable {
	for i := len(mw) - 1; i >= 0; i-- {
		if mw[i] != nil {
			r = mw[i](r)
		}
	}
	return r
}
