package retry

// Tokens returns the tokens b holds, for the tests of gRPC's algorithm.
func (b *TokenBudget) Tokens() float64 { return b.held() }
