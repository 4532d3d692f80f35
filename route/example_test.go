package route_test

import (
	"context"
	"errors"
	"fmt"

	"go.opentelemetry.io/otel/metric/noop"

	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/pool"
	"github.com/steadfast-go/steadfast/route"
)

// model answers with its name.
func model(name string) core.Runnable {
	return core.RunnableFunc(func(context.Context, any, ...core.Option) (any, error) { return name, nil })
}

// Deployments carry their tags and price; a call requires a region and
// keeps under a price, and only a deployment that meets both serves it.
func ExampleWith() {
	p, err := pool.New([]pool.Deployment{
		{Name: "eu", Runnable: route.Tag(model("eu"), 2.5, "region:eu", "zdr")},
		{Name: "us", Runnable: route.Tag(model("us"), 1.5, "region:us")},
	}, pool.WithMeterProvider(noop.NewMeterProvider()))
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx := route.With(context.Background(), route.Constraints{Require: []string{"region:eu"}, MaxPrice: 3})
	out, err := p.Invoke(ctx, "Bonjour")
	fmt.Println(out, err)

	// No deployment meets these: the call fails at once, naming why.
	ctx = route.With(context.Background(), route.Constraints{Require: []string{"zdr"}, MaxPrice: 2})
	_, err = p.Invoke(ctx, "Bonjour")
	var re *route.Error
	fmt.Println(errors.As(err, &re), re.Constraint)
	// Output:
	// eu <nil>
	// true require zdr
}

// Tag gives a fallback's candidate its tags: a call that excludes a tag
// skips the candidates that carry it.
func ExampleTag() {
	claude := route.Tag(model("claude"), 3, "retains-data")
	gemini := route.Tag(model("gemini"), 1.25)
	p, err := pool.New([]pool.Deployment{{Name: "claude", Runnable: claude}, {Name: "gemini", Runnable: gemini}},
		pool.WithMeterProvider(noop.NewMeterProvider()))
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx := route.With(context.Background(), route.Constraints{Exclude: []string{"retains-data"}})
	out, _ := p.Invoke(ctx, "hi")
	fmt.Println(out)
	// Output: gemini
}
