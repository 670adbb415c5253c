package server

import (
	"errors"
	"fmt"
	"sync"
)

// DefaultMaxRegistrationErrors is how many registration errors a server
// keeps for Err unless Options.MaxRegistrationErrors says otherwise.
const DefaultMaxRegistrationErrors = 100

// registrationErrors keeps every error an Add* registration returned, so
// that one the caller ignored still surfaces: through Server.Err, and in
// the server's log (Options.Logger, at Error level) once it starts
// serving — the first Serve or Connect, or a carrier built on it
// (streamhttp.NewHandler). A registration that fails after that is
// logged at once.
type registrationErrors struct {
	mu      sync.Mutex
	errs    []error // at most maxRegistrationErrors()
	dropped int     // errors beyond that, counted
	serving bool
}

func (s *Server) maxRegistrationErrors() int {
	if n := s.opts.MaxRegistrationErrors; n > 0 {
		return n
	}
	return DefaultMaxRegistrationErrors
}

// noteRegistration records err (nil: nothing) and returns it unchanged.
func (s *Server) noteRegistration(err error) error {
	if err == nil {
		return nil
	}
	r := &s.regErrs
	r.mu.Lock()
	kept := len(r.errs) < s.maxRegistrationErrors()
	if kept {
		r.errs = append(r.errs, err)
	} else {
		r.dropped++
	}
	serving := r.serving
	r.mu.Unlock()
	// Before serving, an error beyond the bound is counted only (the
	// count is logged with the others); while serving, each is logged.
	if serving {
		s.logRegistrationErrors([]error{err}, 0)
	}
	return err
}

// startServing logs the registration errors recorded so far, once: from
// then on each new one is logged as it happens.
func (s *Server) startServing() {
	r := &s.regErrs
	r.mu.Lock()
	if r.serving {
		r.mu.Unlock()
		return
	}
	r.serving = true
	pending, dropped := append([]error(nil), r.errs...), r.dropped
	r.mu.Unlock()
	s.logRegistrationErrors(pending, dropped)
}

func (s *Server) logRegistrationErrors(errs []error, dropped int) {
	for _, err := range errs {
		s.log.Error("server: a registration failed; what it registers is missing (Server.Err returns every such error)", "err", err)
	}
	if dropped > 0 {
		s.log.Error("server: more registrations failed than Options.MaxRegistrationErrors keeps", "more", dropped)
	}
}

// Err returns every error that a registration (AddTool, AddRawTool,
// AddPrompt, AddResource, AddResourceTemplate, AddExtension, AddMethod,
// AddNotification) has returned on this server, joined with errors.Join
// in the order they happened, or nil when every registration succeeded.
// It keeps the first Options.MaxRegistrationErrors of them (default
// DefaultMaxRegistrationErrors) and then an error counting the rest.
// The errors are returned by the calls as well; Err is for code that did
// not check each one, and for a test that asserts a server is complete:
//
//	if err := s.Err(); err != nil {
//		log.Fatal(err)
//	}
//
// The server also logs each of these errors at Error level
// (Options.Logger) when it starts serving, and any later one at once, so
// an ignored registration error shows without reading the source.
func (s *Server) Err() error {
	r := &s.regErrs
	r.mu.Lock()
	defer r.mu.Unlock()
	errs := r.errs
	if r.dropped > 0 {
		errs = append(errs[:len(errs):len(errs)], fmt.Errorf("server: %d more registration errors, beyond Options.MaxRegistrationErrors (%d)", r.dropped, s.maxRegistrationErrors()))
	}
	return errors.Join(errs...)
}
