# check.sh - sourced by the shell tests (tests/*.sh), with SUITE naming the
# suite and T a scratch directory. check NAME COMMAND... runs the command,
# which must succeed, and prints "PASS SUITE: NAME", or "FAIL SUITE: NAME"
# and the command's output; fails counts the failures.
fails=0
check() {
	name=$1
	shift
	if "$@" >"$T/out" 2>"$T/err"; then
		echo "PASS $SUITE: $name"
	else
		echo "FAIL $SUITE: $name"
		sed 's/^/  | /' "$T/out" "$T/err" | head -20
		fails=$((fails + 1))
	fi
}
