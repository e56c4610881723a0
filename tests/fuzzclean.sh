#!/bin/sh
# fuzzclean.sh - each fuzz target's corpus replay (build/tests/test_fuzz_*)
# works in a scratch directory of its own under $TMPDIR; it must remove it
# when it exits, so that test runs and fuzzing leave nothing behind.
# Usage: sh tests/fuzzclean.sh    (from the source root; tests/run.sh does this)
T=$(mktemp -d "${TMPDIR:-/tmp}/bfi-fuzzclean.XXXXXX")
trap 'rm -rf "$T"' EXIT
for t in build/tests/test_fuzz_*; do
	[ -x "$t" ] || continue
	case $t in *.o | *.d) continue ;; esac
	name=${t##*/}
	mkdir "$T/$name"
	if ! TMPDIR="$T/$name" "$t" >"$T/$name.log" 2>&1; then
		echo "FAIL fuzzclean: $name replays its corpus"
		sed 's/^/  | /' "$T/$name.log" | tail -5
	elif [ -n "$(ls -A "$T/$name")" ]; then
		echo "FAIL fuzzclean: $name leaves its scratch directory behind"
		ls -A "$T/$name" | sed 's/^/  | /'
	else
		echo "PASS fuzzclean: $name removes its scratch directory"
	fi
done
exit 0
