// Package procsec keeps toolc's own secrets from the processes it starts.
//
// A handler plugin or an upstream MCP server gets an environment without
// $TOOLC_TOKEN and $TOOLC_STATE_KEY (see plugins/rpc.InheritedEnv), but on
// Linux any process of the same user may read another's initial
// environment from /proc/PID/environ, and its memory from /proc/PID/mem:
// a child reads its parent's by /proc/$PPID. Seal closes that door.
package procsec

// Seal makes the calling process unreadable by other processes of its
// user, children included: on Linux it clears the process's dumpable flag
// (prctl PR_SET_DUMPABLE), which hands /proc/PID/environ, /proc/PID/mem
// and ptrace to root alone, and stops core dumps, which would hold the
// same secrets. A child's execve sets the flag again for the child, so
// the processes toolc starts are not affected. Elsewhere it does nothing.
func Seal() error { return seal() }
