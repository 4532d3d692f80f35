package fleet

import (
	"log/slog"
	"time"

	"go.opentelemetry.io/otel/metric"

	"github.com/steadfast-go/steadfast/budget"
)

// Option configures a Limiter and a Budget alike. Nil options are ignored.
type Option interface {
	LimiterOption
	BudgetOption
}

// LimiterOption configures a Limiter: an Option, or WithFallbackShare.
type LimiterOption interface{ applyLimiter(*config) }

// BudgetOption configures a Budget: an Option, WithSyncInterval or
// WithSetting.
type BudgetOption interface{ applyBudget(*config) }

// option applies to both, limiterOption and budgetOption to one each: an
// option passed to what it does not configure is a compile error.
type (
	option        func(*config)
	limiterOption func(*config)
	budgetOption  func(*config)
)

func (o option) applyLimiter(c *config)        { o(c) }
func (o option) applyBudget(c *config)         { o(c) }
func (o limiterOption) applyLimiter(c *config) { o(c) }
func (o budgetOption) applyBudget(c *config)   { o(c) }

type config struct {
	timeout       time.Duration
	syncInterval  time.Duration
	fallbackShare float64
	logger        *slog.Logger
	mp            metric.MeterProvider
	setting       *budget.Setting
}

// The defaults: Redis calls bounded at 50 ms, the Budget synced ten times
// a second.
const (
	defaultTimeout      = 50 * time.Millisecond
	defaultSyncInterval = 100 * time.Millisecond
)

func defaults() config {
	return config{timeout: defaultTimeout, syncInterval: defaultSyncInterval, fallbackShare: 1, logger: slog.Default()}
}

func limiterConfig(opts []LimiterOption) config {
	c := defaults()
	for _, opt := range opts {
		if opt != nil {
			opt.applyLimiter(&c)
		}
	}
	return c
}

func budgetConfig(opts []BudgetOption) config {
	c := defaults()
	for _, opt := range opts {
		if opt != nil {
			opt.applyBudget(&c)
		}
	}
	return c
}

// WithTimeout bounds every Redis call; past it, the call is decided locally.
// The default is 50 ms.
func WithTimeout(d time.Duration) Option { return option(func(c *config) { c.timeout = d }) }

// WithSyncInterval sets how often a Budget exchanges its counts with
// Redis; the default is 100 ms. A Budget learns of the rest of the fleet
// this much late.
func WithSyncInterval(d time.Duration) BudgetOption {
	return budgetOption(func(c *config) { c.syncInterval = d })
}

// WithFallbackShare sets the share, in (0, 1], of the limit that a Limiter
// allows itself while Redis is unreachable: 1/8 for one of eight replicas.
// The default is 1, the whole limit, which is right for one replica and
// sends too much for many: set it.
func WithFallbackShare(share float64) LimiterOption {
	return limiterOption(func(c *config) { c.fallbackShare = share })
}

// WithSetting sets a Budget's setting: the parameters of package budget's
// law (see budget.Setting). The default is budget.DefaultSetting(),
// retry.RecommendedBudget's; every replica of a key should use the same.
func WithSetting(s budget.Setting) BudgetOption {
	return budgetOption(func(c *config) { c.setting = &s })
}

// WithLogger sets the logger told, once each, when Redis becomes
// unreachable and when it answers again; the default is slog.Default().
func WithLogger(l *slog.Logger) Option {
	return option(func(c *config) {
		if l != nil {
			c.logger = l
		}
	})
}

// WithMeterProvider sets the meter provider of the fleet.fallbacks
// counter; the default is the global one.
func WithMeterProvider(mp metric.MeterProvider) Option {
	return option(func(c *config) {
		if mp != nil {
			c.mp = mp
		}
	})
}
