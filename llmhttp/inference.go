package llmhttp

import (
	"context"

	"go.opentelemetry.io/otel/attribute"

	"github.com/steadfast-go/steadfast/internal/genai"
)

// Inference marks the moment a provider adapter sends its request, with
// the GenAI conventions' attributes of the request: gen_ai.operation.name,
// gen_ai.provider.name and gen_ai.request.model (the adapter's
// CallAttributes), server.address and server.port when known. Under a
// retry layer in the conventions' latest mode (retry.WithGenAIConventions,
// or OTEL_SEMCONV_STABILITY_OPT_IN=gen_ai_latest_experimental), it starts
// the attempt's inference: a CLIENT span gen_ai.client.inference named
// "{gen_ai.operation.name} {gen_ai.request.model}", those attributes set
// at its start for samplers, and the gen_ai.client.inference.* metrics,
// which Pump and Response.Record feed and the retry layer ends with the
// attempt. It returns ctx holding the span: send the request, stream it
// and record its Response with that ctx. Otherwise it returns ctx as is.
//
// An adapter calls it where the request leaves, after anything that may
// refuse locally, so that a refused call emits no gen_ai.* at all.
func Inference(ctx context.Context, attrs ...attribute.KeyValue) context.Context {
	if s := genai.From(ctx); s != nil {
		return s.Start(ctx, attrs)
	}
	return ctx
}
