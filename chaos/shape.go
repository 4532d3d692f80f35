package chaos

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/steadfast-go/steadfast/llmhttp"
)

// Provider is the format a fault's answer takes: its status, headers and
// error body on the wire, its codes in the error a Runnable returns.
type Provider string

// The providers whose formats faults take.
const (
	OpenAI    Provider = "openai"    // and every OpenAI-compatible server: vLLM, LiteLLM, Groq
	Anthropic Provider = "anthropic" // the Messages API
	Gemini    Provider = "gemini"    // the Gemini API and Vertex AI
)

// answer is a fault's answer in one provider's format: what goes on the
// wire (status, header, body) and what an adapter reads of it.
type answer struct {
	status    int
	code      string // the provider's error code or type
	message   string
	header    []string      // name, value pairs
	after     time.Duration // a wait given in the body (Gemini's RetryInfo)
	dead      bool          // the key or account cannot serve
	permanent bool          // the provider's code says no retry fixes the call
	body      string
}

// answerOf is f's answer in p's format.
func (f *Fault) answerOf(p Provider) answer {
	var a answer
	switch p {
	case Anthropic:
		a = f.anthropic()
		a.body = mustJSON(map[string]any{"type": "error", "error": map[string]any{"type": a.code, "message": a.message}, "request_id": "req_chaos"})
		a.header = append(a.header, "request-id", "req_chaos")
	case Gemini:
		a = f.gemini()
		e := map[string]any{"code": a.status, "message": a.message, "status": a.code}
		switch {
		case f.kind == rateLimited:
			e["details"] = []any{map[string]any{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": seconds(f.wait)}}
		case f.kind == quotaExhausted:
			e["details"] = []any{map[string]any{"@type": "type.googleapis.com/google.rpc.QuotaFailure", "violations": []any{map[string]any{
				"quotaMetric": "generativelanguage.googleapis.com/generate_content_free_tier_requests",
				"quotaId":     "GenerateRequestsPerDayPerProjectPerModel-FreeTier",
			}}}}
		}
		a.body = mustJSON(map[string]any{"error": e})
	default:
		a = f.openAI()
		var code any // OpenAI sends null where it has no code
		if a.code != "" && a.code != "server_error" {
			code = a.code
		}
		typ := a.code
		switch f.kind {
		case rateLimited, rateLimitedInBody:
			typ = "requests"
		case contextOverflow:
			typ = "invalid_request_error"
		}
		a.body = mustJSON(map[string]any{"error": map[string]any{"message": a.message, "type": typ, "param": nil, "code": code}})
		a.header = append(a.header, "x-request-id", "req_chaos")
	}
	a.header = append(a.header, "content-type", "application/json")
	return a
}

func (f *Fault) openAI() answer {
	switch f.kind {
	case rateLimited:
		return answer{status: 429, code: "rate_limit_exceeded",
			message: "Rate limit reached for gpt-4o-mini in organization org-chaos on requests per min (RPM): Limit 3, Used 3, Requested 1.",
			header:  []string{"retry-after", strconv.FormatInt(ceilSeconds(f.wait), 10), "retry-after-ms", strconv.FormatInt(f.wait.Milliseconds(), 10)}}
	case rateLimitedInBody:
		return answer{status: 429, code: "rate_limit_exceeded",
			message: "Rate limit reached for gpt-4o-mini in organization org-chaos on tokens per min (TPM): Limit 30000, Used 29500, Requested 2000. Please try again in " + seconds(f.wait) + "."}
	case overloaded:
		return answer{status: 503, code: "server_error", message: "The engine is currently overloaded, please try again later."}
	case quotaExhausted:
		return answer{status: 429, code: "insufficient_quota", dead: true,
			message: "You exceeded your current quota, please check your plan and billing details."}
	case contextOverflow:
		return answer{status: 400, code: "context_length_exceeded", permanent: true, message: fmt.Sprintf(
			"This model's maximum context length is %d tokens. However, you requested %d tokens (%d in the messages, %d in the completion). Please reduce the length of the messages or completion.",
			f.limit, f.input+f.output, f.input, f.output)}
	}
	return answer{status: 500, code: "server_error", message: "The server had an error while processing your request. Sorry about that!"}
}

func (f *Fault) anthropic() answer {
	switch f.kind {
	case rateLimited:
		return answer{status: 429, code: "rate_limit_error",
			message: "This request would exceed the rate limit for your organization of 50 requests per minute.",
			header:  []string{"retry-after", strconv.FormatInt(ceilSeconds(f.wait), 10)}}
	case rateLimitedInBody:
		return answer{status: 429, code: "rate_limit_error",
			message: "This request would exceed the rate limit for your organization of 50 requests per minute. Please try again in " + seconds(f.wait) + "."}
	case overloaded, streamError:
		return answer{status: 529, code: "overloaded_error", message: "Overloaded"}
	case quotaExhausted:
		return answer{status: 400, code: "invalid_request_error", permanent: true,
			message: "Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits."}
	case contextOverflow:
		return answer{status: 400, code: "invalid_request_error", permanent: true, message: fmt.Sprintf(
			"input length and `max_tokens` exceed context limit: %d + %d > %d, decrease input length or `max_tokens` and try again",
			f.input, f.output, f.limit)}
	}
	return answer{status: 500, code: "api_error", message: "Internal server error"}
}

func (f *Fault) gemini() answer {
	switch f.kind {
	case rateLimited:
		return answer{status: 429, code: "RESOURCE_EXHAUSTED", after: f.wait,
			message: "Resource has been exhausted (e.g. check quota)."}
	case rateLimitedInBody:
		return answer{status: 429, code: "RESOURCE_EXHAUSTED",
			message: "Resource has been exhausted (e.g. check quota). Please retry in " + seconds(f.wait) + "."}
	case overloaded, streamError:
		return answer{status: 503, code: "UNAVAILABLE", message: "The model is overloaded. Please try again later."}
	case quotaExhausted:
		return answer{status: 429, code: "RESOURCE_EXHAUSTED", dead: true,
			message: "You exceeded your current quota, please check your plan and billing details."}
	case contextOverflow:
		return answer{status: 400, code: "INVALID_ARGUMENT", permanent: true, message: fmt.Sprintf(
			"The input token count (%d) exceeds the maximum number of tokens allowed (%d).", f.input+f.output, f.limit)}
	}
	return answer{status: 500, code: "INTERNAL", message: "An internal error has occurred. Please retry or report in https://developers.generativeai.google/guide/troubleshooting"}
}

// inBandEvent is the error event a StreamError ends a stream with, in the
// format of p's API at path, the seq-th event of its stream, and what an
// adapter reads of it.
func inBandEvent(p Provider, path string, seq int) (string, answer) {
	f := Fault{kind: streamError}
	switch p {
	case Anthropic:
		a := f.anthropic()
		return "event: error\ndata: " + mustJSON(map[string]any{"type": "error", "error": map[string]any{"type": a.code, "message": a.message}}) + "\n\n", a
	case Gemini:
		a := f.gemini()
		return "data: " + mustJSON(map[string]any{"error": map[string]any{"code": a.status, "message": a.message, "status": a.code}}) + "\n\n", a
	}
	a := f.openAI()
	if strings.HasSuffix(strings.TrimSuffix(path, "/"), "/responses") {
		return "event: error\ndata: " + mustJSON(map[string]any{"type": "error", "code": a.code, "message": a.message, "param": nil, "sequence_number": seq}) + "\n\n", a
	}
	return "data: " + mustJSON(map[string]any{"error": map[string]any{"message": a.message, "type": a.code, "param": nil, "code": nil}}) + "\n\n", a
}

// providerOf is the provider whose format a request to it expects: by its
// host, else its path, else OpenAI's (which every compatible server
// speaks).
func providerOf(req *http.Request) Provider {
	host, path := req.URL.Host, req.URL.Path
	switch {
	case strings.Contains(host, "anthropic"):
		return Anthropic
	case strings.HasSuffix(host, "googleapis.com"):
		return Gemini
	case strings.HasSuffix(path, "/messages"):
		return Anthropic
	case strings.Contains(path, ":generateContent"), strings.Contains(path, ":streamGenerateContent"):
		return Gemini
	}
	return OpenAI
}

// seconds writes d as the providers do in messages and Gemini's
// RetryInfo: "2.19s", "20s", "0.5s".
func seconds(d time.Duration) string {
	return strconv.FormatFloat(d.Seconds(), 'f', -1, 64) + "s"
}

// ceilSeconds is d in whole seconds, rounded up, as Retry-After says it.
func ceilSeconds(d time.Duration) int64 { return int64(math.Ceil(d.Seconds())) }

// mustJSON is v, maps of strings, numbers and nil, as JSON: it cannot
// fail.
func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// err is the error an adapter of p returns for a, read by llmhttp.Classify
// as the providers' adapters read theirs.
func (a answer) err(p Provider) error {
	var h http.Header
	if len(a.header) > 0 {
		h = make(http.Header, len(a.header)/2)
		for i := 0; i+1 < len(a.header); i += 2 {
			h.Add(a.header[i], a.header[i+1])
		}
	}
	e := &llmhttp.APIError{Status: a.status, Code: a.code, After: a.after, Permanent: a.permanent, Dead: a.dead,
		Err: fmt.Errorf("chaos: %s answered %d %s: %s", p, a.status, http.StatusText(a.status), a.message)}
	return llmhttp.Classify(e, h, a.message)
}
