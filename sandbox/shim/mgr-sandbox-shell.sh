#!/bin/sh
# docdex sandbox shell shim. src/core/sandbox/shim.ts copies this file unchanged to
# <plugin dir>/mgr-sandbox-shell each time the agent server starts with sandbox enforcement, and writes its
# configuration beside it as mgr-sandbox-shell.conf (one `key=value` per line, read below, never evaluated):
#   nonce=<this start's nonce>       runner=<one word of the runner command, repeated in order>
#   host_shell=<absolute path>       env_name=<one allow-listed variable name, repeated>
#   unplanned=<the refusal message for an unplanned host spawn>
#
# The agent server's shell setting points here. Per spawn, the mgr-sandbox.js plugin's shell.env hook sets:
#   MGR_SANDBOX_WORKDIR   run the command in the microVM, in this guest directory
#   MGR_SANDBOX_REFUSE    planning failed: print this message, run nothing, exit 125
#   MGR_SANDBOX_ENV_<N>   value of <N> to pass into the guest, for the allow-listed names only
#   MGR_SANDBOX_PLANNED   this start's nonce, on every spawn the hook saw
# and the plugin sets MGR_SANDBOX_HOOKED to the nonce in the agent server's own environment once the hook fired.
# With neither WORKDIR nor REFUSE set, the command goes to the remembered host shell, but only when one of the
# two markers carries the nonce: a spawn the plugin planned as host (a pseudo-terminal), or, once the hook is
# known to fire, one opencode never offers to it (a slash-command template). Anything else means the plugin is
# not there to plan it (not loaded, hook not called), and it is refused: the sandbox fails closed. So is every
# spawn when the configuration is missing or incomplete.
# The command text is passed on as one argument, byte for byte; it is never rewritten or re-quoted.

# The manager's internal token is for plugins inside the agent server, never for commands.
unset MGR_INTERNAL_TOKEN

planned=${MGR_SANDBOX_PLANNED:-}
hooked=${MGR_SANDBOX_HOOKED:-}
unset MGR_SANDBOX_PLANNED MGR_SANDBOX_HOOKED

refuse() {
  printf '%s\n' "$1" >&2
  exit 125
}

fail() {
  refuse "Sandbox enforcement is on but the sandbox is unavailable: $1"
}

# The configuration is found beside this file; the agent server calls the shim by its absolute path.
case $0 in
  */*) conf=${0%/*}/mgr-sandbox-shell.conf ;;
  *) conf= ;;
esac
if [ -z "$conf" ] || [ ! -r "$conf" ]; then
  fail "the shell shim has no configuration next to it ($0)"
fi

nonce=
host_shell=
unplanned=
runners=0
while IFS= read -r line || [ -n "$line" ]; do
  case $line in
    nonce=*) nonce=${line#nonce=} ;;
    host_shell=*) host_shell=${line#host_shell=} ;;
    unplanned=*) unplanned=${line#unplanned=} ;;
    runner=*) runners=$((runners + 1)) ;;
  esac
done < "$conf"
if [ -z "$nonce" ] || [ -z "$host_shell" ] || [ -z "$unplanned" ] || [ "$runners" -eq 0 ]; then
  fail "the shell shim configuration $conf is incomplete"
fi

if [ -n "${MGR_SANDBOX_REFUSE:-}" ]; then
  refuse "$MGR_SANDBOX_REFUSE"
fi

if [ -z "${MGR_SANDBOX_WORKDIR:-}" ]; then
  if [ "$planned" != "$nonce" ] && [ "$hooked" != "$nonce" ]; then
    refuse "$unplanned"
  fi
  exec "$host_shell" "$@"
fi

# The agent server calls a non-bash shell as: SHIM -c COMMAND. Login/interactive flags mean nothing in the
# guest and are dropped; anything else is not a command we know how to run faithfully.
while [ $# -gt 0 ]; do
  case "$1" in
    -c) break ;;
    -l|-i|--login|--norc|--noprofile) shift ;;
    *) fail "the shell shim expects -c COMMAND, got $1" ;;
  esac
done
[ $# -ge 2 ] || fail "the shell shim expects -c COMMAND"
shift
cmd=$1
shift

# What is left ($0 and positional parameters for sh -c) goes after the command. POSIX sh has no arrays, so
# the new argument list is appended behind the old one and the old one rotated to the end. The runner words
# and the allow-listed names come from the configuration, in its order.
n=$#
while IFS= read -r line || [ -n "$line" ]; do
  case $line in runner=*) set -- "$@" "${line#runner=}" ;; esac
done < "$conf"
set -- "$@" sandbox exec -w "$MGR_SANDBOX_WORKDIR"
while IFS= read -r line || [ -n "$line" ]; do
  case $line in env_name=*) ;; *) continue ;; esac
  name=${line#env_name=}
  # The name is used in eval below: only a plain variable name, and never the manager's token.
  case $name in
    '' | [0-9]* | *[!A-Z0-9_]* | MGR_INTERNAL_TOKEN) fail "the shell shim configuration names an invalid variable" ;;
  esac
  isset=
  value=
  eval "isset=\${MGR_SANDBOX_ENV_$name+x}"
  if [ "$isset" = x ]; then
    eval "value=\$MGR_SANDBOX_ENV_$name"
    set -- "$@" -e "$name=$value"
  fi
done < "$conf"
set -- "$@" -- sh -c "$cmd"
while [ "$n" -gt 0 ]; do
  set -- "$@" "$1"
  shift
  n=$((n - 1))
done
exec "$@"
