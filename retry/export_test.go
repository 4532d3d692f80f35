package retry

// Tokens returns the tokens b holds, for the tests of gRPC's algorithm.
func (b *TokenBudget) Tokens() float64 { return b.held() }

// OperationConfigs returns the per-operation policies opts set, for the
// tests of ParsePolicies.
func OperationConfigs(opts ...Option) map[string]RetryConfig {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	return o.policies
}

// ConfigError is the error of an invalid RetryConfig field, for the tests
// that read its Operation and Field.
type ConfigError = configError

// ErrAttemptAbandoned is the cause of an abandoned Stream attempt's
// context, for the tests that read it.
var ErrAttemptAbandoned = errAttemptAbandoned
