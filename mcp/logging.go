package mcp

// LoggingLevel is a syslog (RFC 5424) severity, from debug to emergency.
type LoggingLevel string

// Logging levels in increasing severity.
const (
	LevelDebug     LoggingLevel = "debug"
	LevelInfo      LoggingLevel = "info"
	LevelNotice    LoggingLevel = "notice"
	LevelWarning   LoggingLevel = "warning"
	LevelError     LoggingLevel = "error"
	LevelCritical  LoggingLevel = "critical"
	LevelAlert     LoggingLevel = "alert"
	LevelEmergency LoggingLevel = "emergency"
)

var levelSeverity = map[LoggingLevel]int{
	LevelDebug: 0, LevelInfo: 1, LevelNotice: 2, LevelWarning: 3,
	LevelError: 4, LevelCritical: 5, LevelAlert: 6, LevelEmergency: 7,
}

// Valid reports whether l is one of the eight levels.
func (l LoggingLevel) Valid() bool { _, ok := levelSeverity[l]; return ok }

// Severity returns 0 for debug up to 7 for emergency, or -1 if l is invalid.
func (l LoggingLevel) Severity() int {
	if s, ok := levelSeverity[l]; ok {
		return s
	}
	return -1
}

// AtLeast reports whether l is valid and at least as severe as threshold, i.e.
// whether a message at level l passes a filter set to threshold. An invalid
// threshold lets nothing pass.
func (l LoggingLevel) AtLeast(threshold LoggingLevel) bool {
	t := threshold.Severity()
	return t >= 0 && l.Severity() >= t
}

// SetLevelParams are the params of logging/setLevel (2025 only).
type SetLevelParams struct {
	Meta  Meta         `json:"_meta,omitzero"`
	Level LoggingLevel `json:"level"`
}

// LoggingMessageParams are the params of notifications/message.
type LoggingMessageParams struct {
	Meta  Meta         `json:"_meta,omitzero"`
	Level LoggingLevel `json:"level"`
	// Logger optionally names the source.
	Logger string `json:"logger,omitzero"`
	// Data is any JSON value; decoded data uses the generic Go JSON types.
	Data any `json:"data"`
}
