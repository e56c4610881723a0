#!/bin/sh
# run.sh - run every test program and the CLI tests; end with "N passed, N failed".
# Each program prints one "PASS name" or "FAIL name" line per case; a program
# that dies without reporting counts as one failure.
cd "$(dirname "$0")/.." || exit 2
passed=0
failed=0
log=$(mktemp "${TMPDIR:-/tmp}/bfi-test-log.XXXXXX")
for t in build/tests/test_* tests/*.sh; do
	case $t in tests/run.sh) continue ;; esac
	[ -x "$t" ] || [ "${t%.sh}" != "$t" ] || continue
	case $t in *.o | *.d) continue ;; esac
	printf '== %s\n' "$t"
	if [ "${t%.sh}" != "$t" ]; then
		sh "$t" ./bfi >"$log" 2>&1
	else
		"$t" >"$log" 2>&1
	fi
	status=$?
	cat "$log"
	p=$(grep -c '^PASS ' "$log")
	f=$(grep -c '^FAIL ' "$log")
	if [ "$status" -ne 0 ] && [ "$f" -eq 0 ]; then
		printf 'FAIL %s exited with status %s\n' "$t" "$status"
		f=1
	fi
	passed=$((passed + p))
	failed=$((failed + f))
done
rm -f "$log"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
