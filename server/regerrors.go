package server

import (
	"errors"
	"sync"
)

// registrationErrors keeps every error an Add* registration returned, so
// that one the caller ignored still surfaces: through Server.Err, and in
// the server's log (Options.Logger, at Error level) once it starts
// serving — the first Serve or Connect, or a carrier built on it
// (streamhttp.NewHandler). A registration that fails after that is
// logged at once.
type registrationErrors struct {
	mu      sync.Mutex
	errs    []error
	serving bool
}

// noteRegistration records err (nil: nothing) and returns it unchanged.
func (s *Server) noteRegistration(err error) error {
	if err == nil {
		return nil
	}
	r := &s.regErrs
	r.mu.Lock()
	r.errs = append(r.errs, err)
	serving := r.serving
	r.mu.Unlock()
	if serving {
		s.logRegistrationErrors([]error{err})
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
	pending := append([]error(nil), r.errs...)
	r.mu.Unlock()
	s.logRegistrationErrors(pending)
}

func (s *Server) logRegistrationErrors(errs []error) {
	for _, err := range errs {
		s.log.Error("server: a registration failed; what it registers is missing (Server.Err returns every such error)", "err", err)
	}
}

// Err returns every error that a registration (AddTool, AddRawTool,
// AddPrompt, AddResource, AddResourceTemplate, AddExtension, AddMethod,
// AddNotification) has returned on this server, joined with errors.Join
// in the order they happened, or nil when every registration succeeded.
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
	return errors.Join(r.errs...)
}
