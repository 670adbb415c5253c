package servers

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"
)

// Serve is the bench commands' server loop: it listens on addr, writes
// the bound address to addrFile (atomically, for the scripts that wait
// for it) or prints it, and serves srv until SIGINT/SIGTERM or maxRun,
// then shuts it down within two seconds. Errors before serving are fatal.
func Serve(srv *http.Server, addr, addrFile string, maxRun time.Duration) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		log.Fatal(err)
	}
	if addrFile != "" {
		tmp := addrFile + ".tmp"
		if err := os.WriteFile(tmp, []byte(ln.Addr().String()), 0o644); err != nil {
			log.Fatal(err)
		}
		if err := os.Rename(tmp, addrFile); err != nil {
			log.Fatal(err)
		}
	} else {
		fmt.Println(ln.Addr())
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() { // ends at the signal or maxRun, whichever comes first
		select {
		case <-ctx.Done():
		case <-time.After(maxRun):
		}
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		log.Print(err)
	}
}
