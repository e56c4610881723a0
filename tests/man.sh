#!/bin/sh
# man.sh - the manual pages and the bash completion: every command of
# `bfi --help` has a page, each page renders with man -l without a
# warning, every option a command's --help lists is in its page, bfi(3)
# names every call of the public headers, and the completion offers the
# commands, their options and the values of --layout.
# Usage: sh tests/man.sh ./bfi   (from the source root, after ninja)
BFI=${1:-./bfi}
T=$(mktemp -d "${TMPDIR:-/tmp}/bfi-man.XXXXXX")
trap 'rm -rf "$T"' EXIT
SUITE=man
. "$(dirname "$0")/lib/check.sh"

# the commands, and a command's options, as the bash completion reads them from --help
commands=$(bash -c '. tools/bfi.bash-completion && _bfi_commands "$1"' sh "$BFI")

# render PAGE: the page as text, in $T/page; its warnings in $T/warn
render() {
	MANWIDTH=200 LC_ALL=C.UTF-8 man --warnings -l "$1" >"$T/page" 2>"$T/warn" && [ ! -s "$T/warn" ] ||
		{ echo "$1 renders with warnings:"; cat "$T/warn"; return 1; }
}

options() {
	bash -c '. tools/bfi.bash-completion && _bfi_options "$1" "$2"' sh "$BFI" "$1"
}

pages() {
	[ -n "$commands" ] || { echo "bfi --help lists no commands"; return 1; }
	for c in $commands; do
		p=build/man/bfi-$c.1
		[ -f "$p" ] || { echo "no page $p for bfi $c"; return 1; }
		render "$p" || return 1
		n=0
		for o in $(options "$c"); do
			grep -q -- "$o\b" "$T/page" || { echo "bfi-$c(1) lacks $o, which bfi $c --help lists"; return 1; }
			n=$((n + 1))
		done
		[ "$n" -gt 0 ] || { echo "bfi $c --help lists no options"; return 1; }
		# an option's help set apart from its name: not run into its argument
		! grep -q '^\\fB-.*\\fI[^\\]*\\fR \\fI[a-z]' "$p" ||
			{ echo "bfi-$c(1): an option's help runs into its name:"; grep '^\\fB-.*\\fI[^\\]*\\fR \\fI[a-z]' "$p"; return 1; }
		! grep -q 'iB here' "$T/page" || { echo "bfi-$c(1) holds a figure of the machine that built it"; return 1; }
		grep -q '^EXIT STATUS' "$T/page" && grep -q '^EXAMPLES' "$T/page" && grep -q '^SEE ALSO' "$T/page" ||
			{ echo "bfi-$c(1) lacks EXIT STATUS, EXAMPLES or SEE ALSO"; return 1; }
	done
}
check "every command has a page, rendered without warnings, with every option its --help lists" pages

sections() {
	for s in 1 3 5; do
		render "build/man/bfi.$s" || return 1
	done
	render build/man/bfi.1
	for c in $commands; do
		grep -q "bfi-$c(1)" "$T/page" || { echo "bfi(1) does not point to bfi-$c(1)"; return 1; }
	done
	render build/man/bfi.3
	for f in $(grep -ho 'BFI_API[^(]*(' reader/bfi.h format/bfi_error.h format/bfi_hash.h format/bfi_memory.h |
		grep -o 'bfi_[a-z_0-9]*($' | tr -d '('); do
		grep -q "$f" "$T/page" || { echo "bfi(3) does not name $f"; return 1; }
	done
	render build/man/bfi.5
	grep -q 'index.bfi' "$T/page" && grep -q 'catalog.mdb' "$T/page"
}
check "bfi(1) points to every command's page, bfi(3) names every public call, bfi(5) renders" sections

# the JSON documented: every field bfi inspect --json and bfi filter info --json print is in the page
json_fields() {
	"$BFI" build -q -o "$T/snap" --layout flat,tree,rambo,plain tests/data/demo &&
		printf 'a\tx\nb\ty\n' | "$BFI" append "$T/coll" -q --tsv - &&
		printf 'x\ny\n' | "$BFI" filter create -o "$T/f.bff" --expected-keys 10 || return 1
	render build/man/bfi-inspect.1 || return 1
	for f in $({ "$BFI" inspect --json "$T/snap"; "$BFI" inspect --json "$T/coll"; } |
		python3 -c 'import json, sys
def keys(o):
    if isinstance(o, dict):
        for k, v in o.items():
            yield k
            yield from keys(v)
    elif isinstance(o, list):
        for v in o:
            yield from keys(v)
print("\n".join(sorted({k for l in sys.stdin for k in keys(json.loads(l))})))'); do
		grep -q -- "$f" "$T/page" || { echo "bfi-inspect(1) does not name the field $f"; return 1; }
	done
	render build/man/bfi-filter.1 || return 1
	for f in $("$BFI" filter info --json "$T/f.bff" | python3 -c 'import json, sys; print("\n".join(json.load(sys.stdin)))'); do
		grep -q -- "$f" "$T/page" || { echo "bfi-filter(1) does not name the field $f"; return 1; }
	done
}
check "bfi-inspect(1) and bfi-filter(1) name every field of their JSON" json_fields

completion() {
	command -v bash >/dev/null || { echo "no bash"; return 1; }
	bash -c '
	. tools/bfi.bash-completion
	t() { COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); _bfi; echo "${COMPREPLY[*]}"; }
	[ "$(t "$1" bu)" = build ] || { echo "bfi bu: $(t "$1" bu)"; exit 1; }
	[ "$(t "$1" query --js)" = --json ] || { echo "bfi query --js: $(t "$1" query --js)"; exit 1; }
	[ "$(t "$1" build --layout r)" = rambo ] || { echo "--layout r: $(t "$1" build --layout r)"; exit 1; }
	[ "$(t "$1" append --thr)" = --threads ] || { echo "append --thr: $(t "$1" append --thr)"; exit 1; }
	[ "$(t "$1" filter in)" = info ] || { echo "filter in: $(t "$1" filter in)"; exit 1; }
	for c in $(t "$1" ""); do
		case $c in --*) continue ;; esac
		[ -n "$(t "$1" "$c" --)" ] || { echo "no options completed for bfi $c"; exit 1; }
	done' sh "$BFI"
}
check "bash completion: commands, each one's options, and --layout's values" completion
[ "$fails" -eq 0 ]
