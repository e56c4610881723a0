# whole.sh - sourced by the bench scripts: time the whole `bfi query`
# process, start-up, open and output included.
#
# whole_query BFI SNAP LAYOUT KEYS: bfi query --count over the key file, one
# untimed run to warm the page cache, then five timed runs; prints "median
# (min-max)" in microseconds per query. One process's time varies with what
# the kernel is doing at the moment (at N = 10^6 most of it is page faults),
# so one run is not a figure.
whole_query() {
	lines=$(wc -l <"$4")
	"$1" query --count --layout "$3" "$2" <"$4" >/dev/null
	for i in 1 2 3 4 5; do
		t0=$(date +%s%N)
		"$1" query --count --layout "$3" "$2" <"$4" >/dev/null
		t1=$(date +%s%N)
		awk -v a="$t0" -v b="$t1" -v n="$lines" 'BEGIN { printf "%.2f\n", (b - a) / 1e3 / n }'
	done | sort -n | awk '{ v[NR] = $1 } END { printf "%s (%s-%s)", v[3], v[1], v[5] }'
}
