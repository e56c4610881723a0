#!/bin/sh
# install.sh DESTDIR PREFIX - run by `ninja install`: headers, libraries,
# the bfi command, bfi.pc, the manual pages, bash completion and the Python
# module, staged under DESTDIR when it is set. Every file it puts is listed in PREFIX/share/bfi/installed,
# which tools/uninstall.sh (`ninja uninstall`) reads to remove them, and
# only them.
set -eu
dest=${1:-}
prefix=${2:-/usr/local}
root=$dest$prefix
cd "$(dirname "$0")/.."
list=$root/share/bfi/installed
# the folders down to share/bfi that are made now (PREFIX itself, under a
# DESTDIR those above it too), the outermost first
fresh=
d=$root/share/bfi
while [ ! -d "$d" ]; do
	fresh="dir ${d#"$dest"}
$fresh"
	d=$(dirname "$d")
done
install -d "$root/share/bfi"
printf '%s' "$fresh" >"$list.new"
# an install over an earlier one: the folders that one made are still bfi's to remove
if [ -f "$list" ]; then
	grep '^dir ' "$list" >>"$list.new" || true
fi

# put MODE SOURCE PATH: install SOURCE as PREFIX-relative PATH, and list it,
# with each folder it had to make first ("dir PATH"), for uninstall to remove.
# Paths are never put through sed: a DESTDIR or PREFIX may hold any byte.
put() {
	d=$(dirname "$3")
	made=
	while [ "$d" != . ] && [ ! -d "$root/$d" ]; do
		made="dir $prefix/$d
$made"
		d=$(dirname "$d")
	done
	install -d "$root/$(dirname "$3")"
	install -m "$1" "$2" "$root/$3"
	printf '%s' "$made" >>"$list.new"
	echo "$prefix/$3" >>"$list.new"
}

put 755 bfi bin/bfi
put 644 libbfi.a lib/libbfi.a
put 755 libbfi.so lib/libbfi.so.3
ln -sf libbfi.so.3 "$root/lib/libbfi.so"
echo "$prefix/lib/libbfi.so" >>"$list.new"
# the read-only half, for servers and bindings that only read: no parser, no compressed inputs
put 644 libbfi_read.a lib/libbfi_read.a
put 755 libbfi_read.so lib/libbfi_read.so.2
ln -sf libbfi_read.so.2 "$root/lib/libbfi_read.so"
echo "$prefix/lib/libbfi_read.so" >>"$list.new"
# every public header: those with BFI_API calls or types, bfi_manifest.h's internals aside
for h in reader/bfi.h writer/bfi_writer.h format/bfi_error.h format/bfi_hash.h \
	format/bfi_text.h format/bfi_catalog.h format/bfi_layout.h format/bfi_seq.h \
	format/bfi_paths.h format/bfi_memory.h; do
	put 644 "$h" "include/bfi/$(basename "$h")"
done
tmp=$(mktemp "${TMPDIR:-/tmp}/bfi-install.XXXXXX")
trap 'rm -f "$tmp"' EXIT
while IFS= read -r l; do
	case $l in
	prefix=*) printf 'prefix=%s\n' "$prefix" ;;
	*) printf '%s\n' "$l" ;;
	esac
done <bfi.pc >"$tmp"
put 644 "$tmp" lib/pkgconfig/bfi.pc
# the manual pages (built by ninja into build/man) and bash completion
for m in build/man/*.[135]; do
	put 644 "$m" "share/man/man${m##*.}/$(basename "$m")"
done
put 644 tools/bfi.bash-completion share/bash-completion/completions/bfi
# the Snakemake workflow (tools/workflow/README.md): shard builds, joins, fanned-out queries
for f in Snakefile config.yaml merge_answers.py README.md example/words.txt \
	profiles/slurm/config.yaml; do
	put 644 "tools/workflow/$f" "share/bfi/workflow/$f"
done
put 755 tools/workflow/profiles/slurm/slurm-status.py share/bfi/workflow/profiles/slurm/slurm-status.py
put 755 tools/workflow/plan.py share/bfi/workflow/plan.py
# its example's sets (the demo's) beside it, and the sheet pointing there
for f in tests/data/demo/*; do
	put 644 "$f" "share/bfi/workflow/example/sets/$(basename "$f")"
done
while IFS= read -r l; do
	case $l in
	*"	../../../tests/data/demo/"*) printf '%s\tsets/%s\n' "${l%%	*}	keys" "${l##*/}" ;;
	*) printf '%s\n' "$l" ;;
	esac
done <tools/workflow/example/samples.tsv >"$tmp"
put 644 "$tmp" share/bfi/workflow/example/samples.tsv

# The Python module, for the system's python3 (PYTHON, else /usr/bin/python3,
# else python3 on PATH): where it looks under PREFIX (dist-packages on
# Debian), else PREFIX's own site-packages; it records where the library is.
py=${PYTHON:-}
[ -n "$py" ] || { [ -x /usr/bin/python3 ] && py=/usr/bin/python3; } || py=$(command -v python3 || true)
if [ -n "$py" ]; then
	pydir=$("$py" - "$prefix" <<'EOF'
import sys, sysconfig
prefix = sys.argv[1].rstrip("/")
on_path = [p for p in sys.path if p.startswith(prefix + "/lib/") and p.endswith("-packages")]
print(on_path[0] if on_path else sysconfig.get_path(
    "purelib", "posix_prefix", vars={"base": prefix, "platbase": prefix}))
EOF
	)
	rel=${pydir#"$prefix"/}
	for m in tools/python/bfi/*.py; do # the package's modules
		put 644 "$m" "$rel/bfi/${m##*/}"
	done
	printf '# written by ninja install: where this module finds libbfi\nLIBRARY = "%s"\n' \
		"$prefix/lib/libbfi.so.3" >"$tmp"
	put 644 "$tmp" "$rel/bfi/_libpath.py"
	echo "installed the Python module into $dest$pydir/bfi (for $py)"
fi

mv "$list.new" "$list"
# a real install (no DESTDIR) by root: the linker's cache learns the new library
if [ -z "$dest" ] && [ "$(id -u)" = 0 ] && command -v ldconfig >/dev/null; then
	ldconfig
fi
echo "installed bfi into $root ($(wc -l <"$list") files, listed in $list)"
