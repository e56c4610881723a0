#!/bin/sh
# demo.sh - the main job on the embedded dataset: build a snapshot from
# tests/data/demo (54 Debian packages as sets of description words), answer
# sample queries, and inspect and verify the result; then how to type bfi
# as the README does. Run by `ninja demo`, which builds libbfi.so and the
# manual pages first.
set -eu
cd "$(dirname "$0")/.."
snap=demo.snap
echo "\$ bfi build -o $snap tests/data/demo"
./bfi build -o "$snap" tests/data/demo
echo
echo "\$ bfi query $snap compression terminal database"
./bfi query "$snap" compression terminal database
echo
printf '%s\n' "\$ printf 'http\\nlmdb\\nnosuchword\\n' | bfi query --json $snap"
printf 'http\nlmdb\nnosuchword\n' | ./bfi query --json "$snap"
echo
echo "\$ bfi inspect $snap"
./bfi inspect "$snap"
echo
echo "\$ bfi verify $snap"
./bfi verify "$snap"
echo
# the README types bfi: say how this build's becomes that, and where its manual is
cat <<EOF
bfi is ./bfi in this source tree. To type it as the README does:
  export PATH="\$PWD:\$PATH"      (this shell), or ninja install (everyone)
Its manual, before an install: man -l build/man/bfi.1, man -l build/man/bfi-query.1, ...
EOF
