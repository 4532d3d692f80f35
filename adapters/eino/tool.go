package eino

import (
	"context"
	"errors"
	"fmt"

	"github.com/cloudwego/eino/components/tool"
	"github.com/cloudwego/eino/schema"

	"github.com/steadfast-go/steadfast/core"
)

// ToolRunnable is an eino tool as a core.Runnable: Invoke takes the
// arguments in JSON (a string) and returns the tool's result (a string).
// Batch runs Invokes; Stream yields the result as one chunk.
type ToolRunnable struct {
	core.RunnableFunc
	cfg config
}

// FromTool returns t as a core.Runnable named after the tool. It is not
// idempotent unless WithIdempotent says so, so a retry layer calls it once
// unless the policy sets RetryNonIdempotent (then deduplicate by
// retry.AttemptFromContext's InvocationID). It reports an error when t is
// nil or its Info fails.
func FromTool(ctx context.Context, t tool.InvokableTool, opts ...Option) (*ToolRunnable, error) {
	if t == nil {
		return nil, errors.New("eino: FromTool: tool is nil")
	}
	info, err := t.Info(ctx)
	if err != nil {
		return nil, fmt.Errorf("eino: FromTool: %w", err)
	}
	r := &ToolRunnable{cfg: configure(info.Name, opts)}
	r.RunnableFunc = func(ctx context.Context, input any, _ ...core.Option) (any, error) {
		args, ok := input.(string)
		if !ok {
			return nil, &inputError{what: "a tool takes its arguments as a JSON string", input: input}
		}
		out, err := t.InvokableRun(ctx, args)
		if err != nil {
			return nil, r.cfg.adapt(err)
		}
		return out, nil
	}
	return r, nil
}

// Name returns the tool's name.
func (r *ToolRunnable) Name() string { return r.cfg.name }

// Idempotent reports what WithIdempotent said: false by default.
func (r *ToolRunnable) Idempotent() bool { return r.cfg.idempotent }

// RunnableTool is a core.Runnable as an eino tool.
type RunnableTool struct {
	r    core.Runnable
	info *schema.ToolInfo
}

var _ tool.InvokableTool = (*RunnableTool)(nil)

// ToTool returns r as an eino tool described by info. It reports an error
// when r or info is nil.
func ToTool(r core.Runnable, info *schema.ToolInfo) (*RunnableTool, error) {
	if r == nil || info == nil {
		return nil, errors.New("eino: ToTool: Runnable or ToolInfo is nil")
	}
	return &RunnableTool{r: r, info: info}, nil
}

// Info returns the tool's description.
func (t *RunnableTool) Info(context.Context) (*schema.ToolInfo, error) { return t.info, nil }

// InvokableRun invokes the Runnable with the arguments and returns its
// result as a string.
func (t *RunnableTool) InvokableRun(ctx context.Context, args string, _ ...tool.Option) (string, error) {
	out, err := t.r.Invoke(ctx, args)
	if err != nil {
		return "", err
	}
	if s, ok := out.(string); ok {
		return s, nil
	}
	return fmt.Sprint(out), nil
}
