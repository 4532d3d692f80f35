package genai

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
)

// model is what the vendored YAML defines: each metric's instrument and
// unit, and every attribute an entry refers to.
type model struct {
	metrics map[string][2]string // name → instrument, unit
	refs    map[string]bool
	text    string
}

func readModel(t *testing.T) model {
	t.Helper()
	m := model{metrics: map[string][2]string{}, refs: map[string]bool{}}
	files, err := filepath.Glob("testdata/*.yaml")
	if err != nil || len(files) != 3 {
		t.Fatalf("the vendored model: %v files, %v", files, err)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		m.text += string(data)
		var name string
		sc := bufio.NewScanner(strings.NewReader(string(data)))
		for sc.Scan() {
			line := strings.TrimSpace(sc.Text())
			k, v, ok := strings.Cut(line, ": ")
			if !ok {
				continue
			}
			v = strings.Trim(v, `"'`)
			switch k {
			case "- name":
				name = v
			case "instrument":
				e := m.metrics[name]
				e[0] = v
				m.metrics[name] = e
			case "unit":
				e := m.metrics[name]
				e[1] = v
				m.metrics[name] = e
			case "- ref":
				m.refs[v] = true
			}
		}
	}
	return m
}

// TestNamesAreTheConventions fails when a metric, its instrument or its
// unit, the span, or an attribute key that this package emits is not the
// pinned conventions'.
func TestNamesAreTheConventions(t *testing.T) {
	m := readModel(t)
	for _, in := range allInstrument {
		got, ok := m.metrics[in.Name]
		if !ok {
			t.Errorf("metric %s is not in the model", in.Name)
			continue
		}
		if got != [2]string{in.Kind, in.Unit} {
			t.Errorf("metric %s: we make a %s in %s, the model says a %s in %s", in.Name, in.Kind, in.Unit, got[0], got[1])
		}
	}
	if !strings.Contains(m.text, "alongside a `"+SpanType+"`") {
		t.Errorf("the model's metrics do not name the span %s", SpanType)
	}
	for _, k := range allKeys {
		if k == keyResendCount {
			continue // the general HTTP conventions', below
		}
		if !m.refs[string(k)] {
			t.Errorf("attribute %s is not referred to by the model's inference span or metrics", k)
		}
	}
	// The keys the adapters pass, and those of the general conventions,
	// are semconv v1.40.0's, the version steadfast imports.
	for k, want := range map[string]string{
		string(keyOperation):     string(semconv.GenAIOperationNameKey),
		string(keyProvider):      string(semconv.GenAIProviderNameKey),
		string(keyRequestModel):  string(semconv.GenAIRequestModelKey),
		string(keyErrorType):     string(semconv.ErrorTypeKey),
		string(keyResendCount):   string(semconv.HTTPRequestResendCountKey),
		string(keyFinishReasons): string(semconv.GenAIResponseFinishReasonsKey),
	} {
		if k != want {
			t.Errorf("key %s: semconv says %s", k, want)
		}
	}
}

// Only the conventions' inference operations leave the call span.
func TestIsInference(t *testing.T) {
	for op, want := range map[string]bool{"chat": true, "generate_content": true, "text_completion": true, "execute_tool": false, "embeddings": false} {
		if got := IsInference([]attribute.KeyValue{keyOperation.String(op)}); got != want {
			t.Errorf("IsInference(%s) = %v, want %v", op, got, want)
		}
	}
	if IsInference(nil) {
		t.Error("IsInference(nil) = true")
	}
}
