# Sourced by hack/bench.sh and hack/bench-real.sh once $out is set: logging,
# the list of commands for the report, and run, which records a benchmark
# command (with $out shown as \$out) the first time and appends its output.

log() { printf '%s %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }

cmds="$out/commands.txt"
: >"$cmds"

# run appends the output of one benchmark process to $1, and records the
# command the first time.
run() {
	local file="$1"; shift
	local shown="${*//$out/\$out}"
	if ! grep -qxF "$shown" "$cmds"; then echo "$shown" >>"$cmds"; fi
	"$@" >>"$file"
}
