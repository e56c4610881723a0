#!/bin/sh
# page.sh CMD OUT - the manual page bfi-CMD(1), made from what `bfi CMD
# --help` says (help2scd.awk) and the page's own examples (bfi-CMD.scd),
# rendered by scdoc into OUT; a figure of the machine that builds it (bfi
# build's default memory) is left out. Run by ninja from the source root.
set -eu
cmd=$1
out=$2
summary=$(./bfi --help | awk -v c="$cmd" '$1 == c { $1 = ""; sub(/^ +/, ""); print }')
[ -n "$summary" ] || { echo "page.sh: bfi --help lists no command $cmd" >&2; exit 1; }
{
	./bfi "$cmd" --help | awk -v page="bfi-$cmd" -v section=1 -v summary="$summary" \
		-f tools/man/help2scd.awk
	cat "tools/man/bfi-$cmd.scd"
} | sed 's/: [0-9.]* [KMGT]iB here, so/, so/' | scdoc >"$out.tmp"
mv "$out.tmp" "$out"
