package eino_test

import (
	"context"
	"errors"
	"io"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/cloudwego/eino/components/model"
	"github.com/cloudwego/eino/components/tool"
	"github.com/cloudwego/eino/compose"
	"github.com/cloudwego/eino/schema"
	"go.opentelemetry.io/otel/metric/noop"
	tnoop "go.opentelemetry.io/otel/trace/noop"
	"go.uber.org/goleak"

	"github.com/steadfast-go/steadfast/adapters/eino"
	"github.com/steadfast-go/steadfast/core"
	"github.com/steadfast-go/steadfast/retry"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// overloaded is a provider's 503, as an adapter would make it.
type overloaded struct{}

func (overloaded) Error() string   { return "503 overloaded" }
func (overloaded) StatusCode() int { return 503 }

// turn is one scripted answer: chunks streamed then err, or the message.
type turn struct {
	msg    *schema.Message
	chunks []*schema.Message
	err    error
}

// chatModel is an eino chat model that answers with its turns in order
// and records the tools each call carried.
type chatModel struct {
	mu    sync.Mutex
	turns []turn
	calls int
	tools [][]*schema.ToolInfo
}

var _ model.BaseChatModel = (*chatModel)(nil)

func (m *chatModel) next(opts []model.Option) turn {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.tools = append(m.tools, model.GetCommonOptions(nil, opts...).Tools)
	t := m.turns[min(m.calls, len(m.turns)-1)]
	m.calls++
	return t
}

func (m *chatModel) Generate(_ context.Context, _ []*schema.Message, opts ...model.Option) (*schema.Message, error) {
	t := m.next(opts)
	return t.msg, t.err
}

func (m *chatModel) Stream(ctx context.Context, _ []*schema.Message, opts ...model.Option) (*schema.StreamReader[*schema.Message], error) {
	t := m.next(opts)
	sr, sw := schema.Pipe[*schema.Message](0)
	go func() {
		defer sw.Close()
		for _, c := range t.chunks {
			if sw.Send(c, nil) {
				return
			}
		}
		if t.err != nil {
			sw.Send(nil, t.err)
		}
	}()
	return sr, nil
}

// answer is an assistant message with a tool call and usage.
func answer(text string) *schema.Message {
	m := schema.AssistantMessage(text, []schema.ToolCall{{ID: "call_1", Function: schema.FunctionCall{Name: "search", Arguments: `{"q":"go"}`}}})
	m.ResponseMeta = &schema.ResponseMeta{FinishReason: "tool_calls", Usage: &schema.TokenUsage{PromptTokens: 12, CompletionTokens: 5, TotalTokens: 17}}
	return m
}

// retried wraps m: FromChatModel, retry with 1s backoffs, ToChatModel.
func retried(t *testing.T, m model.BaseChatModel) *eino.RunnableChatModel {
	t.Helper()
	return retriedWith(t, m, retry.RetryConfig{MaxRetries: 2, InitialBackoff: time.Second, MaxBackoff: time.Second})
}

// retriedWith wraps m: FromChatModel, retry under cfg, ToChatModel.
func retriedWith(t *testing.T, m model.BaseChatModel, cfg retry.RetryConfig) *eino.RunnableChatModel {
	t.Helper()
	r, err := eino.FromChatModel(m)
	if err != nil {
		t.Fatal(err)
	}
	rr, err := retry.New(r, cfg,
		retry.WithTracerProvider(tnoop.NewTracerProvider()), retry.WithMeterProvider(noop.NewMeterProvider()))
	if err != nil {
		t.Fatal(err)
	}
	cm, err := eino.ToChatModel(rr)
	if err != nil {
		t.Fatal(err)
	}
	return cm
}

// framework → Runnable → framework inside an eino chain: a failure is
// retried; the message, its tool call and usage come back intact, and
// bound tools reach the model.
func TestChainRoundTripKeepsMessageToolCallsAndUsage(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := &chatModel{turns: []turn{{err: overloaded{}}, {msg: answer("")}}}
		tools := []*schema.ToolInfo{{Name: "search", Desc: "search the web"}}
		cm, err := retried(t, m).WithTools(tools)
		if err != nil {
			t.Fatal(err)
		}
		chain, err := compose.NewChain[[]*schema.Message, *schema.Message]().AppendChatModel(cm).Compile(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		out, err := chain.Invoke(t.Context(), []*schema.Message{schema.UserMessage("find go")})
		if err != nil {
			t.Fatal(err)
		}
		if len(out.ToolCalls) != 1 || out.ToolCalls[0].Function.Name != "search" || out.ResponseMeta.Usage.CompletionTokens != 5 {
			t.Errorf("message = %+v, want the tool call and usage", out)
		}
		if m.calls != 2 || len(m.tools[1]) != 1 || m.tools[1][0].Name != "search" {
			t.Errorf("calls = %d, tools seen %v, want 2 calls carrying the bound search tool", m.calls, m.tools)
		}
	})
}

// A stream that failed after a content-free chunk did not commit and is
// retried; the reader gets the second stream whole.
func TestStreamFailureBeforeFirstChunkIsRetried(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		role := &schema.Message{Role: schema.Assistant}
		m := &chatModel{turns: []turn{
			{chunks: []*schema.Message{role}, err: overloaded{}},
			{chunks: []*schema.Message{role, schema.AssistantMessage("Hel", nil), answer("lo")}},
		}}
		sr, err := retried(t, m).Stream(t.Context(), []*schema.Message{schema.UserMessage("hi")})
		if err != nil {
			t.Fatal(err)
		}
		defer sr.Close()
		var text string
		var got []*schema.Message
		for {
			c, err := sr.Recv()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			got, text = append(got, c), text+c.Content
		}
		if len(got) != 3 || text != "Hello" || m.calls != 2 || got[2].ResponseMeta.Usage.TotalTokens != 17 {
			t.Errorf("chunks = %d, text %q, calls %d, want 3 (role first), Hello, 2 and the usage", len(got), text, m.calls)
		}
	})
}

// After the first chunk nothing is retried: the failure is the reader's
// error, after the chunk.
func TestStreamFailureAfterFirstChunkIsPassedOn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := &chatModel{turns: []turn{{chunks: []*schema.Message{schema.AssistantMessage("Hel", nil)}, err: overloaded{}}}}
		sr, err := retried(t, m).Stream(t.Context(), nil)
		if err != nil {
			t.Fatal(err)
		}
		defer sr.Close()
		first, err := sr.Recv()
		if err != nil || first.Content != "Hel" {
			t.Fatalf("first Recv() = %v, %v, want Hel", first, err)
		}
		if _, err := sr.Recv(); !errors.As(err, new(overloaded)) || m.calls != 1 {
			t.Errorf("second Recv() error = %v after %d calls, want the 503 and no retry", err, m.calls)
		}
	})
}

// A reader closed early stops the stream; nothing is left running.
func TestReaderClosedEarlyStopsTheStream(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		chunks := []*schema.Message{schema.AssistantMessage("a", nil), schema.AssistantMessage("b", nil), schema.AssistantMessage("c", nil)}
		m := &chatModel{turns: []turn{{chunks: chunks}}}
		sr, err := retried(t, m).Stream(t.Context(), nil)
		if err != nil {
			t.Fatal(err)
		}
		if c, err := sr.Recv(); err != nil || c.Content != "a" {
			t.Fatalf("Recv() = %v, %v", c, err)
		}
		sr.Close()
		synctest.Wait()
	})
}

// echoTool is an eino tool that echoes its arguments and counts its runs.
type echoTool struct{ runs int }

func (t *echoTool) Info(context.Context) (*schema.ToolInfo, error) {
	return &schema.ToolInfo{Name: "echo", Desc: "echoes"}, nil
}
func (t *echoTool) InvokableRun(_ context.Context, args string, _ ...tool.Option) (string, error) {
	t.runs++
	return "echo " + args, nil
}

// A tool round trip: eino tool → Runnable (under retry, not idempotent by
// default) → eino tool.
func TestToolRoundTrip(t *testing.T) {
	et := &echoTool{}
	r, err := eino.FromTool(t.Context(), et)
	if err != nil {
		t.Fatal(err)
	}
	if r.Name() != "echo" || r.Idempotent() {
		t.Errorf("Name, Idempotent = %q, %v, want echo and false: tools are not idempotent unless told", r.Name(), r.Idempotent())
	}
	rr, err := retry.New(r, retry.DefaultRetryConfig(), retry.WithTracerProvider(tnoop.NewTracerProvider()), retry.WithMeterProvider(noop.NewMeterProvider()))
	if err != nil {
		t.Fatal(err)
	}
	back, err := eino.ToTool(rr, &schema.ToolInfo{Name: "echo"})
	if err != nil {
		t.Fatal(err)
	}
	out, err := back.InvokableRun(t.Context(), `{"x":1}`)
	if err != nil || out != `echo {"x":1}` || et.runs != 1 {
		t.Errorf("InvokableRun() = %q, %v after %d runs, want the echo after 1", out, err, et.runs)
	}
	info, _ := back.Info(t.Context())
	if info.Name != "echo" {
		t.Errorf("Info().Name = %q", info.Name)
	}
}

func TestBadInputAndNil(t *testing.T) {
	r, err := eino.FromChatModel(&chatModel{turns: []turn{{msg: answer("x")}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Invoke(t.Context(), 42); err == nil {
		t.Error("Invoke(42) error = nil")
	}
	if out, err := r.Invoke(t.Context(), "hi"); err != nil || out.(*schema.Message).Content != "x" {
		t.Errorf("Invoke(string) = %v, %v", out, err)
	}
	if _, err := eino.FromChatModel(nil); err == nil {
		t.Error("FromChatModel(nil) error = nil")
	}
	if _, err := eino.ToChatModel(nil); err == nil {
		t.Error("ToChatModel(nil) error = nil")
	}
	var _ core.Runnable = r
}

// errRateLimited is what an eino model implementation returns for a 429:
// an error the retry layer cannot read until a provider adapter says what
// it is.
var errRateLimited = errors.New("openai: 429 insufficient_quota")

// The framework's model errors reach the error adapter, so classification
// works through the adapter.
func TestErrorAdapterClassifies(t *testing.T) {
	adapt := func(err error) error {
		if errors.Is(err, errRateLimited) {
			return retry.Permanent(err)
		}
		return err
	}
	m := &chatModel{turns: []turn{{err: errRateLimited}, {msg: answer("never")}}}
	r, err := eino.FromChatModel(m, eino.WithErrorAdapter(adapt))
	if err != nil {
		t.Fatal(err)
	}
	rr, err := retry.New(r, retry.DefaultRetryConfig(), retry.WithTracerProvider(tnoop.NewTracerProvider()), retry.WithMeterProvider(noop.NewMeterProvider()))
	if err != nil {
		t.Fatal(err)
	}
	_, err = rr.Invoke(t.Context(), "q")
	if re, ok := errors.AsType[*retry.Error](err); !ok || re.Outcome != retry.OutcomeNotRetryable || m.calls != 1 || !errors.Is(err, errRateLimited) {
		t.Errorf("Invoke() error = %v after %d calls, want not_retryable after 1, the model's error reachable", err, m.calls)
	}
}

// A stream that breaks after its first chunk, under a retry layer with
// RestartStreams, is started again; the StreamReader, which cannot take a
// chunk back, is given only what extends its text into the new answer,
// or, when the new answer differs, the failure that broke the stream.
func TestARestartedStreamExtendsWhatTheReaderHas(t *testing.T) {
	cfg := retry.RetryConfig{MaxRetries: 2, InitialBackoff: time.Second, MaxBackoff: time.Second, RestartStreams: true}
	msgs := func(texts ...string) []*schema.Message {
		var out []*schema.Message
		for _, s := range texts {
			out = append(out, schema.AssistantMessage(s, nil))
		}
		return out
	}
	for _, tc := range []struct {
		name  string
		again []string
		got   []string
		fails bool
	}{
		{"the same answer again", []string{"Hel", "lo wor", "ld"}, []string{"Hel", "lo wor", "ld"}, false},
		{"other chunks, the same text", []string{"Hello w", "orld"}, []string{"Hel", "lo wor", "ld"}, false},
		{"another answer", []string{"Good", "bye"}, []string{"Hel", "lo wor"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				m := &chatModel{turns: []turn{{chunks: msgs("Hel", "lo wor"), err: overloaded{}}, {chunks: msgs(tc.again...)}}}
				sr, err := retriedWith(t, m, cfg).Stream(t.Context(), nil)
				if err != nil {
					t.Fatal(err)
				}
				defer sr.Close()
				var got []string
				for {
					msg, err := sr.Recv()
					if errors.Is(err, io.EOF) {
						break
					}
					if err != nil {
						if !tc.fails || !errors.As(err, new(overloaded)) {
							t.Fatalf("Recv() error = %v after %q", err, got)
						}
						break
					}
					got = append(got, msg.Content)
				}
				if !slices.Equal(got, tc.got) || m.calls != 2 {
					t.Errorf("reader got %q after %d calls, want %q after 2", got, m.calls, tc.got)
				}
			})
		})
	}
}
