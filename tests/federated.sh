#!/bin/sh
# federated.sh - issue 6's federated case through the command line: 1,000
# sites each make their filter with `bfi filter create`, on their own; an
# indexer builds one snapshot with `bfi build --from-filters`. It must be the
# very snapshot a direct build from all the sites' keys gives (same m, k and
# set order, pre-filters off), and so give the same answers.
# Usage: sh tests/federated.sh ./bfi    (from the source root; tests/run.sh does this)
BFI=${1:-./bfi}
case $BFI in /*) ;; *) BFI=$(pwd)/$BFI ;; esac
T=$(mktemp -d "${TMPDIR:-/tmp}/bfi-fed.XXXXXX")
trap 'rm -rf "$T"' EXIT
SUITE=federated
. tests/lib/check.sh # check NAME COMMAND...: the command must succeed
mkdir -p "$T/keys" "$T/filters"
# site i holds its own words and some its neighbours share
awk -v dir="$T/keys" 'BEGIN {
	for (s = 0; s < 1000; s++) {
		f = sprintf("%s/site%04d", dir, s)
		n = 10 + s % 40
		for (i = 0; i < n; i++)
			print (i % 4 ? sprintf("own-%d-%d", s, i) : sprintf("shared-%d-%d", int(s / 25), i)) > f
		close(f)
	}
}'
sites_ok() {
	i=0
	for f in "$T"/keys/*; do
		# every fourth site ships its filter compressed (file version 2)
		z=
		[ $((i % 4)) -eq 0 ] && z=--compress
		i=$((i + 1))
		"$BFI" filter create -o "$T/filters/$(basename "$f").bff" --bits 4096 --hashes 6 $z "$f" || return 1
	done
	[ "$(ls "$T/filters" | wc -l)" -eq 1000 ]
}
check "1,000 sites make their filters with bfi filter create, a quarter --compress" sites_ok
check "the indexer builds from the filters" \
	"$BFI" build -q -o "$T/fed" --from-filters --layout flat,tree "$T/filters"
for f in "$T"/keys/*; do sed "s/^/$(basename "$f")	/" "$f"; done >"$T/all.tsv"
check "a direct build from every site's keys" \
	"$BFI" build -q -o "$T/direct" --tsv --bits 4096 --hashes 6 --prefilter never \
	--layout flat,tree "$T/all.tsv"
check "the two snapshots are byte-identical" sh -c "
	cmp '$T/fed/index.bfi' '$T/direct/index.bfi' && cmp '$T/fed/catalog.mdb' '$T/direct/catalog.mdb'"
same_answers() {
	cut -f2 "$T/all.tsv" | sort -u >"$T/q"
	echo absent-1 >>"$T/q"
	for layout in flat tree; do
		"$BFI" query --layout $layout "$T/fed" <"$T/q" >"$T/a.$layout" &&
			"$BFI" query --layout $layout "$T/direct" <"$T/q" >"$T/b.$layout" &&
			cmp "$T/a.$layout" "$T/b.$layout" || return 1
	done
	# and every site is found by each of its keys
	awk -F'\t' 'NR == FNR { want[$2] = want[$2] " " $1; next }
		{ for (i = 2; i <= NF; i++) got[$1] = got[$1] " " $i }
		END { for (k in want) { n = split(want[k], w, " "); for (j = 1; j <= n; j++)
			if (index(got[k] " ", " " w[j] " ") == 0) fn++ } exit fn > 0 }' "$T/all.tsv" "$T/a.flat"
}
check "the same answers on flat and tree, with no site missed" same_answers

# The coordinator as a collection: 100 sites' filters arrive in four
# batches and are appended; ten sites resend changed filters (--replace),
# five leave (remove); then the collection is compacted. After every step
# it answers as a fresh build from the filters live at that step.
coll_answers() { "$BFI" query --keys "$1" <"$T/q" |
	awk -F'\t' '{ if (NF == 1) print $1; for (i = 2; i <= NF; i++) print $1 "\t" $i }' | sort; }
as_fresh() {
	rm -rf "$T/fresh" && "$BFI" build -q -o "$T/fresh" --from-filters "$T/live" &&
		coll_answers "$T/coord" >"$T/got" && coll_answers "$T/fresh" >"$T/want" &&
		cmp -s "$T/got" "$T/want"
}
coordinator() {
	mkdir -p "$T/live" "$T/changed" && rm -rf "$T/coord" || return 1
	for b in 0 1 2 3; do
		rm -rf "$T/batch" && mkdir "$T/batch" || return 1
		i=$((b * 25))
		while [ $i -lt $((b * 25 + 25)) ]; do
			cp "$T/filters/site$(printf %04d $i).bff" "$T/batch/" || return 1
			i=$((i + 1))
		done
		"$BFI" append "$T/coord" -q --from-filters "$T/batch" && cp "$T"/batch/*.bff "$T/live/" &&
			as_fresh || { echo "batch $b"; return 1; }
	done
	# ten sites learn new keys and resend their filters
	for s in 3 14 27 38 41 55 62 79 86 97; do
		n=$(printf site%04d $s)
		cp "$T/filters/$n.bff" "$T/changed/" &&
			printf 'new-%d-a\nnew-%d-b\n' $s $s | "$BFI" filter add "$T/changed/$n.bff" || return 1
		printf 'new-%d-a\nnew-%d-b\n' $s $s >>"$T/q"
	done
	"$BFI" append "$T/coord" -q --from-filters "$T/changed" 2>"$T/e1" && return 1 # refused
	grep -q 'already holds a set named' "$T/e1" || return 1
	"$BFI" append "$T/coord" -q --replace --from-filters "$T/changed" &&
		cp "$T"/changed/*.bff "$T/live/" && as_fresh || { echo "replace"; return 1; }
	printf 'new-3-a\n' | "$BFI" query "$T/coord" | grep -q 'site0003' || return 1
	# five sites leave
	"$BFI" remove -q "$T/coord" site0003 site0010 site0050 site0077 site0099 &&
		rm "$T"/live/site0003.bff "$T"/live/site0010.bff "$T"/live/site0050.bff \
			"$T"/live/site0077.bff "$T"/live/site0099.bff && as_fresh || { echo "remove"; return 1; }
	"$BFI" compact -q --full "$T/coord" && "$BFI" verify "$T/coord" >/dev/null && as_fresh ||
		{ echo "compact"; return 1; }
}
check "a coordinator appends 100 sites' filters, replaces ten, removes five, compacts: a fresh build at every step" coordinator
sparse() {
	awk 'BEGIN { for (i = 0; i < 20000; i++) print "id-" i }' >"$T/ids"
	awk 'BEGIN { for (i = 0; i < 100000; i++) print "absent-" i }' >"$T/absent"
	"$BFI" filter create -o "$T/plain.bff" --expected-keys 20000 "$T/ids" &&
		"$BFI" filter create -o "$T/wire.bff" --expected-keys 20000 --compress "$T/ids" || return 1
	p=$(stat -c %s "$T/plain.bff")
	w=$(stat -c %s "$T/wire.bff")
	fp=$("$BFI" filter query "$T/wire.bff" <"$T/absent" | grep -c maybe)
	echo "plain $p bytes, compressed $w bytes, $fp of 100000 absent keys maybe"
	"$BFI" filter info --json "$T/wire.bff" | grep -q '"compressed": true' &&
		[ "$w" -lt "$p" ] && [ "$fp" -le 2000 ] && [ "$("$BFI" filter query "$T/wire.bff" <"$T/ids" | grep -c maybe)" -eq 20000 ]
}
check "--compress --expected-keys: fewer bytes than the plain filter, every key found, rate near 0.01" sparse
[ "$fails" -eq 0 ]
