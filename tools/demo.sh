#!/bin/sh
# demo.sh - the main job on the embedded dataset: build a snapshot from
# tests/data/demo (54 Debian packages as sets of description words), answer
# sample queries, and inspect and verify the result. Run by `ninja demo`.
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
