// Package cli is what the bench's simulators share around their run: the
// -quick and -out flags, cancellation on Ctrl-C, and the exit status.
package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
)

// Main parses the flags, runs run until it returns or the process is
// interrupted, and exits 1, naming the command, when run fails. quickHelp
// says what -quick does for this command.
func Main(name, quickHelp string, run func(ctx context.Context, w io.Writer, quick bool, out string) error) {
	quick := flag.Bool("quick", false, quickHelp)
	out := flag.String("out", "results", "folder for the table and the plot")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	err := run(ctx, os.Stdout, *quick, *out)
	stop()
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
		os.Exit(1)
	}
}
