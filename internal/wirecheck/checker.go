package wirecheck

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/internal/jsonschema"
)

// Checker validates messages against the schema of one MCP revision. It is
// safe for concurrent use.
type Checker struct {
	revision string
	defs     map[string]*jsonschema.Schema

	requests      map[string]string // wire request method → definition
	notifications map[string]string // wire notification method → definition
	defined       map[string]string // every method const → definition
	clientSends   map[string]bool   // methods in ClientRequest/ClientNotification
	serverSends   map[string]bool   // methods in ServerRequest/ServerNotification
	results       map[string]resultDef

	requestEnvelope      string // JSONRPCRequest
	notificationEnvelope string // JSONRPCNotification
	resultEnvelope       string // JSONRPCResultResponse or JSONRPCResponse
	errorResponse        string // JSONRPCErrorResponse or JSONRPCError
}

// resultDef is the definition a method's successful response must match:
// the whole message (a *ResultResponse definition) or only its result.
type resultDef struct {
	name  string
	whole bool
}

// emptyResults are the methods whose result is EmptyResult; the schemas
// say so only in prose.
var emptyResults = []string{"ping", "logging/setLevel", "resources/subscribe", "resources/unsubscribe"}

var checkers sync.Map // revision → *loadOnce

type loadOnce struct {
	once sync.Once
	c    *Checker
	err  error
}

// For returns the Checker of revision, loading it on first use, for a test
// that checks its messages along the way. Without the official schemas
// ($MCPKIT_SCHEMA_DIR unset) it logs one line naming the variable and
// returns nil, and the rest of the test runs: a nil *Checker checks
// nothing. The test fails instead when $MCPKIT_REQUIRE_SCHEMAS=1, and
// whenever the schemas are configured but cannot be read or compiled.
func For(t testing.TB, revision string) *Checker {
	t.Helper()
	c, err := Load(revision)
	if err != nil {
		absent(t, err, logOnce(t))
		return nil
	}
	return c
}

// Need is For for a test whose subject is the schema itself: without the
// official schemas the test is skipped with one line naming
// $MCPKIT_SCHEMA_DIR (a failure when $MCPKIT_REQUIRE_SCHEMAS=1). It never
// returns nil.
func Need(t testing.TB, revision string) *Checker {
	t.Helper()
	c, err := Load(revision)
	if err != nil {
		absent(t, err, t.Skip)
	}
	return c
}

// Load returns the Checker of revision. Each revision is read and compiled
// once per process; later calls return the same Checker (or error).
func Load(revision string) (*Checker, error) {
	v, _ := checkers.LoadOrStore(revision, new(loadOnce))
	l := v.(*loadOnce)
	l.once.Do(func() { l.c, l.err = load(revision) })
	return l.c, l.err
}

func load(revision string) (*Checker, error) {
	dir, err := SchemaDir()
	if err != nil {
		return nil, err
	}
	path := filepath.Join(dir, revision, "schema.json")
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("wirecheck: revision %s: %w", revision, err)
	}
	defs, err := jsonschema.CompileDefinitions(data)
	if err != nil {
		return nil, fmt.Errorf("wirecheck: %s: %w", path, err)
	}
	var doc struct {
		Defs        map[string]definition `json:"$defs"`
		Definitions map[string]definition `json:"definitions"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("wirecheck: %s: %w", path, err)
	}
	if doc.Defs == nil {
		doc.Defs = doc.Definitions
	}
	c := &Checker{
		revision:      revision,
		defs:          defs,
		requests:      map[string]string{},
		notifications: map[string]string{},
		defined:       map[string]string{},
		clientSends:   map[string]bool{},
		serverSends:   map[string]bool{},
		results:       map[string]resultDef{},
	}
	c.scan(doc.Defs)
	pick := func(names ...string) string {
		for _, n := range names {
			if defs[n] != nil {
				return n
			}
		}
		return ""
	}
	c.requestEnvelope = pick("JSONRPCRequest")
	c.notificationEnvelope = pick("JSONRPCNotification")
	c.resultEnvelope = pick("JSONRPCResultResponse", "JSONRPCResponse")
	c.errorResponse = pick("JSONRPCErrorResponse", "JSONRPCError")
	if c.requestEnvelope == "" || c.notificationEnvelope == "" || c.resultEnvelope == "" || c.errorResponse == "" {
		return nil, fmt.Errorf("wirecheck: %s: missing a JSON-RPC envelope definition", path)
	}
	return c, nil
}

// definition is the part of a schema definition that scan needs.
type definition struct {
	Ref   string `json:"$ref"`
	AnyOf []struct {
		Ref string `json:"$ref"`
	} `json:"anyOf"`
	Properties struct {
		Method struct {
			Const *string `json:"const"`
		} `json:"method"`
	} `json:"properties"`
}

func (d definition) method() string {
	if d.Properties.Method.Const == nil {
		return ""
	}
	return *d.Properties.Method.Const
}

// unions are the definitions that list what each side sends.
var unions = []string{"ClientRequest", "ServerRequest", "ClientNotification", "ServerNotification"}

// scan builds the method maps from the definitions.
func (c *Checker) scan(defs map[string]definition) {
	// Every definition with a method const, preferring a definition that is
	// not itself a union (2026-07-28 defines ClientNotification as the
	// cancelled notification), then the first name in sorted order.
	for _, name := range slices.Sorted(maps.Keys(defs)) {
		m := defs[name].method()
		if m == "" {
			continue
		}
		if prev, ok := c.defined[m]; !ok || slices.Contains(unions, prev) && !slices.Contains(unions, name) {
			c.defined[m] = name
		}
	}
	for _, union := range unions {
		u, ok := defs[union]
		if !ok {
			continue
		}
		var members []string
		switch {
		case len(u.AnyOf) > 0:
			for _, a := range u.AnyOf {
				members = append(members, refName(a.Ref))
			}
		case u.Ref != "":
			members = []string{refName(u.Ref)}
		default:
			members = []string{union}
		}
		for _, member := range members {
			m := defs[member].method()
			if m == "" {
				continue
			}
			if strings.HasSuffix(union, "Request") {
				c.requests[m] = c.defined[m]
			} else {
				c.notifications[m] = c.defined[m]
			}
			if strings.HasPrefix(union, "Client") {
				c.clientSends[m] = true
			} else {
				c.serverSends[m] = true
			}
		}
	}
	for m, req := range c.requests {
		base := strings.TrimSuffix(req, "Request")
		switch {
		case c.defs[base+"ResultResponse"] != nil:
			c.results[m] = resultDef{name: base + "ResultResponse", whole: true}
		case c.defs[base+"Result"] != nil:
			c.results[m] = resultDef{name: base + "Result"}
		case slices.Contains(emptyResults, m) && c.defs["EmptyResult"] != nil:
			c.results[m] = resultDef{name: "EmptyResult"}
		}
	}
}

func refName(ref string) string { return ref[strings.LastIndexByte(ref, '/')+1:] }

// Revision returns the revision c checks against, e.g. "2025-11-25".
// A nil Checker (For without the schemas) returns "".
func (c *Checker) Revision() string {
	if c == nil {
		return ""
	}
	return c.revision
}

// Defines reports whether the revision defines method, as a request or
// a notification. A nil Checker defines nothing.
func (c *Checker) Defines(method string) bool {
	if c == nil {
		return false
	}
	_, ok := c.defined[method]
	return ok
}

// CheckDefinition validates instance against the named definition of the
// revision, e.g. "Tool" or "CallToolResult". Like every Check method, it
// returns nil on a nil Checker.
func (c *Checker) CheckDefinition(name string, instance []byte) error {
	if c == nil {
		return nil
	}
	if c.defs[name] == nil {
		return fmt.Errorf("definition %s does not exist in revision %s", name, c.revision)
	}
	return c.validate(name, instance)
}

func (c *Checker) validate(def string, instance []byte) error {
	if err := c.defs[def].Validate(instance); err != nil {
		return fmt.Errorf("%s %s: %w", c.revision, def, err)
	}
	return nil
}

// Check validates a message on its own. A request or notification must use
// a method the revision defines and match both the JSON-RPC envelope and the
// method's definition; an error response must match the error response
// definition; a result response is checked against the generic envelope
// only (use CheckResult or CheckResponse to check the result itself). A
// JSON array is a batch, which only 2025-03-26 allows.
func (c *Checker) Check(msg []byte) error {
	if c == nil {
		return nil
	}
	if isBatch(msg) {
		return c.checkBatch(msg, c.Check)
	}
	env, err := parseEnvelope(msg)
	if err != nil {
		return err
	}
	switch env.kind {
	case kindRequest:
		def, err := c.methodDef(env.method, true)
		if err != nil {
			return err
		}
		return c.validateBoth(def, c.requestEnvelope, msg)
	case kindNotification:
		def, err := c.methodDef(env.method, false)
		if err != nil {
			return err
		}
		return c.validateBoth(def, c.notificationEnvelope, msg)
	case kindError:
		return c.validate(c.errorResponse, msg)
	}
	return c.validate(c.resultEnvelope, msg)
}

// methodDef returns the definition of a wire request (or notification).
func (c *Checker) methodDef(method string, isRequest bool) (string, error) {
	want, other, kind := c.requests, c.notifications, "request"
	if !isRequest {
		want, other, kind = c.notifications, c.requests, "notification"
	}
	if def, ok := want[method]; ok {
		return def, nil
	}
	if _, ok := other[method]; ok {
		if isRequest {
			return "", fmt.Errorf("method %q is a notification in revision %s, but the message has an id", method, c.revision)
		}
		return "", fmt.Errorf("method %q is a request in revision %s, but the message has no id", method, c.revision)
	}
	if def, ok := c.defined[method]; ok {
		return "", fmt.Errorf("method %q is not a JSON-RPC %s in revision %s (%s is not a member of %s)",
			method, kind, c.revision, def, strings.Join(c.unionsFor(isRequest), " or "))
	}
	return "", fmt.Errorf("method %q does not exist in revision %s", method, c.revision)
}

func (c *Checker) unionsFor(isRequest bool) []string {
	var out []string
	for _, u := range unions {
		if strings.HasSuffix(u, "Request") == isRequest && c.defs[u] != nil {
			out = append(out, u)
		}
	}
	return out
}

// CheckResult validates a response to a request for method: an error
// response against the error response definition, a result response against
// the method's result definition (and the JSON-RPC envelope).
func (c *Checker) CheckResult(method string, msg []byte) error {
	if c == nil {
		return nil
	}
	return c.checkResult(method, false, msg)
}

// CheckResponse validates response as the answer to request: the ids must be
// equal, and the result must match the result definition of the request's
// method (CreateTaskResult for a task-augmented request in 2025-11-25).
func (c *Checker) CheckResponse(request, response []byte) error {
	if c == nil {
		return nil
	}
	req, err := parseEnvelope(request)
	if err != nil {
		return fmt.Errorf("request: %w", err)
	}
	if req.kind != kindRequest {
		return errors.New("request: not a JSON-RPC request")
	}
	resp, err := parseEnvelope(response)
	if err != nil {
		return err
	}
	if resp.kind != kindError || !resp.nullID() {
		if resp.idKey() != req.idKey() {
			return fmt.Errorf("response id %s does not match request id %s", resp.id, req.id)
		}
	}
	return c.checkResult(req.method, req.taskAugmented(), response)
}

func (c *Checker) checkResult(method string, task bool, msg []byte) error {
	env, err := parseEnvelope(msg)
	if err != nil {
		return err
	}
	switch env.kind {
	case kindError:
		return c.validate(c.errorResponse, msg)
	case kindRequest, kindNotification:
		return fmt.Errorf("a %s response must have a result or an error, not a method", method)
	}
	if _, err := c.methodDef(method, true); err != nil {
		return err
	}
	if task && c.defs["CreateTaskResult"] != nil {
		return c.validateResult("CreateTaskResult", env.result, msg)
	}
	rd, ok := c.results[method]
	if !ok {
		return fmt.Errorf("no result definition for method %q in revision %s", method, c.revision)
	}
	if rd.whole {
		return c.validate(rd.name, msg)
	}
	return c.validateResult(rd.name, env.result, msg)
}

// validateBoth validates msg against a method's definition and then, when
// it passes, against the JSON-RPC envelope definition (older revisions
// describe the envelope only there). Reporting the specific failure alone
// avoids the same problem being reported twice.
func (c *Checker) validateBoth(def, envelope string, msg []byte) error {
	if err := c.validate(def, msg); err != nil {
		return err
	}
	return c.validate(envelope, msg)
}

// validateResult validates the result member of msg against def and then
// the whole message against the result envelope.
func (c *Checker) validateResult(def string, result, msg []byte) error {
	if err := c.validate(def, result); err != nil {
		return err
	}
	return c.validate(c.resultEnvelope, msg)
}

// ResultDefinition returns the name of the definition that a successful
// response to method must match, e.g. "CallToolResult" (2025-11-25) or
// "CallToolResultResponse" (2026-07-28, which describes the whole message).
func (c *Checker) ResultDefinition(method string) (string, error) {
	if _, err := c.methodDef(method, true); err != nil {
		return "", err
	}
	rd, ok := c.results[method]
	if !ok {
		return "", fmt.Errorf("no result definition for method %q in revision %s", method, c.revision)
	}
	return rd.name, nil
}

func isBatch(msg []byte) bool {
	return jsontext.Value(bytes.TrimSpace(msg)).Kind() == '['
}

// checkBatch applies check to each member of a batch.
func (c *Checker) checkBatch(msg []byte, check func([]byte) error) error {
	if c.defs["JSONRPCBatchRequest"] == nil {
		return fmt.Errorf("JSON-RPC batches are not allowed in revision %s", c.revision)
	}
	var members []jsontext.Value
	if err := json.Unmarshal(msg, &members); err != nil {
		return fmt.Errorf("invalid batch: %w", err)
	}
	if len(members) == 0 {
		return errors.New("empty JSON-RPC batch")
	}
	var errs []error
	for i, m := range members {
		if err := check(m); err != nil {
			errs = append(errs, fmt.Errorf("batch member %d: %w", i, err))
		}
	}
	return errors.Join(errs...)
}
