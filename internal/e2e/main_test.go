package e2e

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"sync/atomic"
	"syscall"
	"testing"

	"go.uber.org/goleak"

	"github.com/mcpkit/mcpkit/transport/stdio"
)

// The test binary doubles as the stdio server: launched with childEnv=1 it
// serves the fixture on its standard input and output and exits when its
// input ends (the first step of the spec's stdio shutdown).
const (
	childEnv = "MCPKIT_E2E_SERVER"
	// childMaxEnv optionally sets the child's stdio.Options.MaxMessageBytes.
	childMaxEnv = "MCPKIT_E2E_MAX_BYTES"
	// childStubbornEnv=1 makes the child ignore the end of its input: it
	// stays until SIGTERM, like a server that does not follow the spec.
	childStubbornEnv = "MCPKIT_E2E_STUBBORN"
	// childMRTREnv=1 makes the child serve the multi round-trip tools of
	// mrtr_test.go instead of the fixture.
	childMRTREnv = "MCPKIT_E2E_MRTR"
)

// TestMain serves the fixture in the child, and otherwise runs the tests
// and fails the package if any goroutine outlives them.
func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "1" {
		os.Exit(serveChild())
	}
	goleak.VerifyTestMain(m)
}

func serveChild() int {
	maxBytes, _ := strconv.Atoi(os.Getenv(childMaxEnv))
	var sigterm chan os.Signal
	if os.Getenv(childStubbornEnv) == "1" {
		sigterm = make(chan os.Signal, 1)
		signal.Notify(sigterm, syscall.SIGTERM)
	}
	srv := newFixture(nil).srv
	if os.Getenv(childMRTREnv) == "1" {
		srv = mrtrServer(new(atomic.Int32))
	}
	if err := srv.Serve(context.Background(), stdio.New(&stdio.Options{MaxMessageBytes: maxBytes})); err != nil {
		fmt.Fprintln(os.Stderr, "e2e child server:", err)
		return 1
	}
	if sigterm != nil {
		<-sigterm
		return 3
	}
	return 0
}
