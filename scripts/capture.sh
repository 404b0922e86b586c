#!/bin/sh
# Capture an ftrace trace with its stack map dumps as one .tar.gz the stackmap explorer opens.
# POSIX sh: runs under busybox sh, dash and adb shell (toybox/mksh). Run as root on the device.
# See `sh capture.sh -h`. Tested by scripts/capture.test.ts against a fake tracefs.

usage() {
  cat <<'EOF'
usage: capture.sh [options]
  -t DIR      tracefs (default: $TRACEFS, else /sys/kernel/tracing, else /sys/kernel/debug/tracing)
  -e EVENT    enable an event, SYSTEM:NAME (e.g. kmem:kmalloc); repeat for more
  -p TRACER   set current_tracer (e.g. function)
  -d SECONDS  how long to trace after the last reset; 0 (default): until interrupted (Ctrl-C)
  -r N        reset the stack map N times (default 0), saving its dumps before each reset
  -i SECONDS  seconds between the start and each reset (default 10)
  -b KB       buffer_size_kb (ring buffer per CPU)
  -o FILE     output .tar.gz (default: ./stackmap-capture-DATE.tar.gz)
  -h          this help
Environment: TRACEFS= tracefs path, KALLSYMS= kallsyms path (default /proc/kallsyms).
Every option changed is restored to its old value at the end, also on INT/TERM.
EOF
}

say() { printf 'capture: %s\n' "$*" >&2; }

TRACEFS_ARG=''
EVENTS=''
TRACER=''
DURATION=0
RESETS=0
INTERVAL=10
BUFKB=''
OUT=''
while getopts 't:e:p:d:r:i:b:o:h' opt; do
  case $opt in
    t) TRACEFS_ARG=$OPTARG ;;
    e) EVENTS="$EVENTS $OPTARG" ;;
    p) TRACER=$OPTARG ;;
    d) DURATION=$OPTARG ;;
    r) RESETS=$OPTARG ;;
    i) INTERVAL=$OPTARG ;;
    b) BUFKB=$OPTARG ;;
    o) OUT=$OPTARG ;;
    h) usage; exit 0 ;;
    *) usage >&2; exit 2 ;;
  esac
done

is_uint() { case $1 in ''|*[!0-9]*) return 1 ;; *) return 0 ;; esac; }
for v in "$DURATION" "$RESETS" "$INTERVAL"; do
  is_uint "$v" || { say "-d, -r and -i take whole seconds or counts, not '$v'"; exit 2; }
done
if [ -n "$BUFKB" ] && ! is_uint "$BUFKB"; then say "-b takes kilobytes, not '$BUFKB'"; exit 2; fi
if [ -z "$EVENTS" ] && [ -z "$TRACER" ]; then say 'nothing to trace: give -e SYSTEM:NAME or -p TRACER'; usage >&2; exit 2; fi

T=${TRACEFS_ARG:-${TRACEFS:-}}
if [ -z "$T" ]; then
  for d in /sys/kernel/tracing /sys/kernel/debug/tracing; do
    if [ -f "$d/tracing_on" ]; then T=$d; break; fi
  done
fi
if [ -z "$T" ] || [ ! -f "$T/tracing_on" ]; then
  say "no tracefs found (${T:-/sys/kernel/tracing, /sys/kernel/debug/tracing}); mount it or give -t DIR"
  exit 1
fi
KALLSYMS=${KALLSYMS:-/proc/kallsyms}
[ -n "$OUT" ] || OUT="./stackmap-capture-$(date +%Y%m%d-%H%M%S).tar.gz"
STAGE="$OUT.d"

# ---- what was changed, to restore: lines "FILE<TAB>OLD", newest last
RESTORE=''
TAB=$(printf '\t')
NL='
'
SET_LOG=''

first_word() { read -r w _ < "$1" 2>/dev/null && printf '%s' "$w"; }

# an option file's value; buffer_size_kb before its first use reads "7 (expanded: 1408)": 1408 is its size
opt_value() {
  line=$(cat "$1" 2>/dev/null)
  case $line in
    *'(expanded: '*) v=${line#*expanded: }; printf '%s' "${v%%)*}" ;;
    *) first_word "$1" ;;
  esac
}

# set FILE VALUE: remember its old value once, then write the new one
set_opt() {
  f="$T/$1"
  if [ ! -e "$f" ]; then say "$1 is absent in $T"; return 1; fi
  old=$(opt_value "$f")
  RESTORE="$1$TAB$old$NL$RESTORE"
  if ! printf '%s\n' "$2" > "$f"; then say "cannot write $2 to $1"; return 1; fi
  SET_LOG="$SET_LOG$1 = $2 (was $old)$NL"
  return 0
}

RESTORED=0
restore() {
  [ "$RESTORED" = 1 ] && return 0
  RESTORED=1
  printf '%s' "$RESTORE" | while IFS="$TAB" read -r f old; do
    [ -n "$f" ] || continue
    printf '%s\n' "$old" > "$T/$f" 2>/dev/null || say "could not restore $f to '$old'"
  done
  say 'options restored'
}

STOP=0
SLEEPER=''
on_signal() {
  STOP=1
  if [ -n "$SLEEPER" ]; then kill "$SLEEPER" 2>/dev/null; fi
}
trap on_signal INT TERM
trap restore EXIT

die() { say "$*"; restore; rm -rf "$STAGE"; exit 1; }

# wait SECONDS, returning early on INT/TERM
pause() {
  [ "$STOP" = 1 ] && return 0
  if [ "$1" -le 0 ]; then return 0; fi
  sleep "$1" &
  SLEEPER=$!
  wait "$SLEEPER" 2>/dev/null
  kill "$SLEEPER" 2>/dev/null
  SLEEPER=''
}

rm -rf "$STAGE" && mkdir -p "$STAGE" || { say "cannot create $STAGE"; exit 1; }

# ---- the stack map, or the plain stacktrace fallback
HAVE_MAP=1
if [ ! -e "$T/options/stackmap" ]; then
  HAVE_MAP=0
  say "this kernel has no stack map ($T/options/stackmap is absent): recording full stacks with options/stacktrace instead"
  if [ "$RESETS" -gt 0 ]; then say "-r $RESETS ignored: there is no stack map to reset"; RESETS=0; fi
fi
[ -e "$T/options/stacktrace" ] || die "$T/options/stacktrace is absent: this kernel cannot record stacks with events"

set_opt tracing_on 0 || die 'cannot stop tracing'
[ -z "$BUFKB" ] || set_opt buffer_size_kb "$BUFKB" || die "cannot set buffer_size_kb to $BUFKB"
if [ -n "$TRACER" ]; then set_opt current_tracer "$TRACER" || die "cannot set current_tracer to $TRACER (see available_tracers)"; fi
for e in $EVENTS; do
  case $e in *:*) ;; *) die "event '$e' is not SYSTEM:NAME" ;; esac
  sys=${e%%:*}
  name=${e#*:}
  [ -e "$T/events/$sys/$name/enable" ] || die "no event $e ($T/events/$sys/$name/enable is absent)"
  set_opt "events/$sys/$name/enable" 1 || die "cannot enable $e"
done
if [ "$HAVE_MAP" = 1 ]; then set_opt options/stackmap 1 || die 'cannot set options/stackmap'; fi
set_opt options/stacktrace 1 || die 'cannot set options/stacktrace'
: > "$T/trace" 2>/dev/null || say 'could not clear the trace buffer; it may hold older events'

# ---- dumps: save stack_map_bin (where present) and stack_map of the current generation
DUMPS=0
dump() {
  DUMPS=$((DUMPS + 1))
  if [ -e "$T/stack_map_bin" ]; then
    tries=0
    # a reset during the read fails it with ESTALE: read it again
    until cat "$T/stack_map_bin" > "$STAGE/stack_map_bin.gen$DUMPS" 2>/dev/null; do
      tries=$((tries + 1))
      [ "$tries" -lt 3 ] || { say "stack_map_bin could not be read (dump $DUMPS)"; rm -f "$STAGE/stack_map_bin.gen$DUMPS"; break; }
    done
  fi
  cat "$T/stack_map" > "$STAGE/stack_map.gen$DUMPS" || say "stack_map could not be read (dump $DUMPS)"
}

reset_map() {
  tries=0
  # EBUSY while another reset runs: try again
  until printf '0\n' > "$T/stack_map" 2>/dev/null; do
    tries=$((tries + 1))
    [ "$tries" -lt 5 ] || { say 'the stack map reset failed'; return 1; }
    sleep 1
  done
}

set_opt tracing_on 1 || die 'cannot start tracing'
say "tracing in $T${EVENTS:+, events$EVENTS}${TRACER:+, tracer $TRACER}"
n=0
while [ "$n" -lt "$RESETS" ] && [ "$STOP" = 0 ]; do
  pause "$INTERVAL"
  [ "$STOP" = 0 ] || break
  dump
  # the kernel traces no reset: a trace_marker line shows where it fell (the explorer reads
  # `stackmap reset N` and counts the v7 ids recorded before it)
  printf 'stackmap reset %s\n' "$((n + 1))" > "$T/trace_marker" 2>/dev/null || say "trace_marker could not be written: the trace will not show reset $((n + 1))"
  reset_map || break
  n=$((n + 1))
  say "reset $n of $RESETS (dump $DUMPS saved)"
done
if [ "$STOP" = 0 ]; then
  if [ "$DURATION" -gt 0 ]; then
    pause "$DURATION"
  else
    say 'tracing until interrupted (Ctrl-C)'
    while [ "$STOP" = 0 ]; do pause 3600; done
  fi
fi
[ "$STOP" = 0 ] || say 'interrupted: saving the capture'
printf '0\n' > "$T/tracing_on"

# ---- the rest of the capture
[ "$HAVE_MAP" = 0 ] || dump
cat "$T/trace" > "$STAGE/trace" || say 'trace could not be read'
[ ! -e "$T/stack_map_stat" ] || cat "$T/stack_map_stat" > "$STAGE/stack_map_stat" || say 'stack_map_stat could not be read'
KSYM_NOTE=''
if cat "$KALLSYMS" > "$STAGE/kallsyms" 2>/dev/null; then
  # all-zero addresses in the first 1000 lines: read without privilege
  if awk 'NR > 1000 { exit } $1 !~ /^0+$/ { nz = 1; exit } END { exit (NR > 0 && !nz) ? 0 : 1 }' "$STAGE/kallsyms"; then
    KSYM_NOTE="$KALLSYMS reads as all-zero addresses: read it as root with kptr_restrict lowered (echo 0 > /proc/sys/kernel/kptr_restrict), or binary dumps cannot be symbolized"
    say "warning: $KSYM_NOTE"
  fi
else
  KSYM_NOTE="$KALLSYMS could not be read"
  say "warning: $KSYM_NOTE"
  rm -f "$STAGE/kallsyms"
fi
RELEASE=$(uname -r 2>/dev/null) || say 'uname -r failed'
HOST=$(uname -n 2>/dev/null) || HOST=
MACHINE=$(uname -m 2>/dev/null) || MACHINE=
# the ring buffer in force (after -b, before the restore), and the CPUs that have one
BUF_NOW=unknown
if [ -e "$T/buffer_size_kb" ]; then BUF_NOW=$(opt_value "$T/buffer_size_kb"); [ -n "$BUF_NOW" ] || BUF_NOW=unknown; fi
NCPU=0
for d in "$T"/per_cpu/cpu*; do [ -d "$d" ] && NCPU=$((NCPU + 1)); done

restore
{
  printf '# stackmap explorer capture, by capture.sh, %s\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)"
  printf '# tracefs: %s\n' "$T"
  printf '# kernel release (uname -r): %s\n' "$RELEASE"
  printf '# host (uname -n): %s\n' "$HOST"
  printf '# machine (uname -m): %s\n' "$MACHINE"
  printf '# buffer_size_kb: %s (per CPU, read from tracefs before the restore)\n' "$BUF_NOW"
  if [ "$NCPU" -gt 0 ]; then printf '# cpus: %s (per_cpu/cpu* in tracefs)\n' "$NCPU"; else printf '# cpus: unknown (no per_cpu/cpu* in tracefs)\n'; fi
  if [ "$HAVE_MAP" = 1 ]; then printf '# stack map: yes, %s dumps, %s resets\n' "$DUMPS" "$n"; else printf '# stack map: none (options/stackmap absent), full stacks via options/stacktrace\n'; fi
  [ "$STOP" = 0 ] || printf '# interrupted\n'
  [ -z "$KSYM_NOTE" ] || printf '# warning: %s\n' "$KSYM_NOTE"
  printf '%s' "$SET_LOG" | while IFS= read -r l; do [ -z "$l" ] || printf '# set %s\n' "$l"; done
} > "$STAGE/capture.txt"

FILES=$(cd "$STAGE" && ls)
# shellcheck disable=SC2086 # the names are ours, without spaces
(cd "$STAGE" && tar -cf - $FILES) | gzip -c > "$OUT" || { say "could not write $OUT"; exit 1; }
rm -rf "$STAGE"
say "wrote $OUT:" $FILES
exit 0
