package rpc

import (
	"runtime"
	"slices"
	"strings"
)

// A plugin does not inherit the host's environment. toolc keeps secrets
// there ($TOOLC_TOKEN guards every tool, $TOOLC_STATE_KEY signs the state
// that clients carry between rounds), and so does whatever started it (a
// CI job's tokens, a cloud's credentials): a handler that reports its
// environment, or a program it runs that does (a crash reporter, a shell
// tool's `env`), would hand them to the model and whoever reads its
// answers. A plugin gets, in this order, so that later ones win:
//
//   - the host's variables that inheritedEnv names: what a process needs to
//     run and to reach the network, the Go runtime's settings, and
//     OpenTelemetry's, which the plugin's tracing reads as the host's does;
//   - the host's variables that ClientConfig.PassEnv names, which is how a
//     handler gets its own configuration (an API key, a database URL);
//   - ClientConfig.Env;
//   - go-plugin's own: the handshake cookie, the protocol versions, the
//     socket directory and, with AutoMTLS, the host's certificate.
//
// toolc's secrets (secretEnv) are never passed from the host's
// environment, whatever PassEnv says. This is the rule of the MCP SDKs
// for the servers that a client starts over stdio: a short list, and what
// the configuration names.

// inheritedEnv names the host's variables that every plugin gets. An entry
// that ends in "*" names every variable that starts with the rest.
var inheritedEnv = []string{
	// The system: where programs are, who and where the user is, the
	// locale, the time zone, temporary files.
	"PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LANGUAGE", "LC_*", "TZ", "TMPDIR", "XDG_*",
	// The network: proxies, and where the TLS roots are.
	"HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "no_proxy", "all_proxy",
	"SSL_CERT_FILE", "SSL_CERT_DIR",
	// The Go runtime of the plugin (not the go command's settings).
	"GODEBUG", "GOGC", "GOMEMLIMIT", "GOMAXPROCS", "GOTRACEBACK", "GORACE", "GOCOVERDIR",
	// Tracing (see internal/otelenv).
	"OTEL_*",
	// Windows, which a Go program needs for its network and its paths.
	"SYSTEMROOT", "SYSTEMDRIVE", "WINDIR", "COMSPEC", "PATHEXT", "TEMP", "TMP", "USERPROFILE", "USERNAME",
	"APPDATA", "LOCALAPPDATA", "PROGRAMDATA", "HOMEDRIVE", "HOMEPATH", "PROCESSOR_ARCHITECTURE", "NUMBER_OF_PROCESSORS",
}

// secretEnv are toolc's secrets, which no plugin gets from the host.
var secretEnv = []string{"TOOLC_TOKEN", "TOOLC_STATE_KEY"}

// pluginEnv returns the environment of a plugin: the variables of host (as
// os.Environ gives them) that inheritedEnv or pass names, except
// secretEnv, and then extra.
func pluginEnv(host, pass, extra []string) []string {
	env := make([]string, 0, len(extra)+16)
	for _, kv := range host {
		name, _, ok := strings.Cut(kv, "=")
		if !ok || name == "" || slices.ContainsFunc(secretEnv, func(s string) bool { return sameName(s, name) }) {
			continue
		}
		if names(inheritedEnv, name) || names(pass, name) {
			env = append(env, kv)
		}
	}
	return append(env, extra...)
}

// names reports whether one of list names the variable name: by its name,
// or by a prefix followed by "*".
func names(list []string, name string) bool {
	for _, n := range list {
		if prefix, ok := strings.CutSuffix(n, "*"); ok {
			if len(name) >= len(prefix) && sameName(name[:len(prefix)], prefix) {
				return true
			}
		} else if sameName(n, name) {
			return true
		}
	}
	return false
}

// sameName compares names of environment variables as the system does:
// without regard to case on Windows.
func sameName(a, b string) bool {
	if runtime.GOOS == "windows" {
		return strings.EqualFold(a, b)
	}
	return a == b
}

// InheritedEnv returns the variables of environ (as os.Environ gives
// them) that every process toolc starts gets, as a plugin does: what a
// process needs to run and to reach the network, never toolc's secrets.
// Package upstream starts existing MCP servers with it, and adds only what
// their contracts name.
func InheritedEnv(environ []string) []string { return pluginEnv(environ, nil, nil) }
