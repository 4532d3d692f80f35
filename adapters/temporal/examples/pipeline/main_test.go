package main

import (
	"testing"

	"github.com/steadfast-go/steadfast/adapters/temporal/examples/internal/leakcheck"
)

func TestMain(m *testing.M) { leakcheck.Main(m) }
