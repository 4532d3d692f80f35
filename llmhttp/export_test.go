package llmhttp

// ParseRateLimits is parseRateLimits, for the tests of package llmhttp_test.
var ParseRateLimits = parseRateLimits
