// Package spantree renders finished OpenTelemetry spans as an indented
// tree: one line per span with its attributes and status, its events
// beneath it, then its children in start order. Tests compare the tree with
// golden files; examples print it.
package spantree

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// Options choose what a line shows besides names, attributes and statuses.
type Options struct {
	// Durations adds each span's duration; leave it off for golden files.
	Durations bool
	// Kind adds each span's kind.
	Kind bool
}

// Render returns the tree of spans. Spans whose parent is not among them
// are roots.
func Render(spans []sdktrace.ReadOnlySpan, o Options) string {
	present := make(map[trace.SpanID]bool, len(spans))
	for _, s := range spans {
		present[s.SpanContext().SpanID()] = true
	}
	children := map[trace.SpanID][]sdktrace.ReadOnlySpan{}
	var roots []sdktrace.ReadOnlySpan
	for _, s := range spans {
		if p := s.Parent().SpanID(); present[p] {
			children[p] = append(children[p], s)
		} else {
			roots = append(roots, s)
		}
	}
	var b strings.Builder
	var walk func(s sdktrace.ReadOnlySpan, depth int)
	walk = func(s sdktrace.ReadOnlySpan, depth int) {
		indent := strings.Repeat("  ", depth)
		b.WriteString(indent + s.Name())
		if o.Kind {
			fmt.Fprintf(&b, " kind=%s", s.SpanKind())
		}
		if o.Durations {
			fmt.Fprintf(&b, " %v", s.EndTime().Sub(s.StartTime()).Round(time.Millisecond))
		}
		fmt.Fprintf(&b, " status=%s", s.Status().Code)
		if kv := attrs(s.Attributes()); kv != "" {
			b.WriteString(" [" + kv + "]")
		}
		b.WriteByte('\n')
		for _, ev := range s.Events() {
			fmt.Fprintf(&b, "%s  event %s [%s]\n", indent, ev.Name, attrs(ev.Attributes))
		}
		for _, k := range byStart(children[s.SpanContext().SpanID()]) {
			walk(k, depth+1)
		}
	}
	for _, s := range byStart(roots) {
		walk(s, 0)
	}
	return b.String()
}

func byStart(spans []sdktrace.ReadOnlySpan) []sdktrace.ReadOnlySpan {
	slices.SortStableFunc(spans, func(a, b sdktrace.ReadOnlySpan) int { return a.StartTime().Compare(b.StartTime()) })
	return spans
}

// attrs renders attributes sorted by key, so the output is stable.
func attrs(kvs []attribute.KeyValue) string {
	parts := make([]string, 0, len(kvs))
	for _, kv := range kvs {
		parts = append(parts, string(kv.Key)+"="+kv.Value.String())
	}
	slices.Sort(parts)
	return strings.Join(parts, " ")
}
