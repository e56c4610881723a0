#!/bin/sh
# install.sh DESTDIR PREFIX - run by `ninja install`: headers, libraries,
# the bfi command, bfi.pc and the Python module, staged under DESTDIR when
# it is set.
set -eu
dest=${1:-}
prefix=${2:-/usr/local}
root=$dest$prefix
cd "$(dirname "$0")/.."
install -d "$root/bin" "$root/lib" "$root/lib/pkgconfig" "$root/include/bfi"
install -m 755 bfi "$root/bin/bfi"
install -m 644 libbfi.a "$root/lib/libbfi.a"
install -m 755 libbfi.so "$root/lib/libbfi.so.2"
ln -sf libbfi.so.2 "$root/lib/libbfi.so"
# every public header: those with BFI_API calls or types, bfi_manifest.h's internals aside
install -m 644 reader/bfi.h writer/bfi_writer.h format/bfi_error.h format/bfi_hash.h \
	format/bfi_text.h format/bfi_catalog.h format/bfi_layout.h format/bfi_seq.h \
	format/bfi_paths.h "$root/include/bfi/"
sed "s|^prefix=.*|prefix=$prefix|" bfi.pc >"$root/lib/pkgconfig/bfi.pc"
chmod 644 "$root/lib/pkgconfig/bfi.pc"

# The Python module, where python3 looks under PREFIX (dist-packages on
# Debian), else PREFIX's own site-packages; it records where the library is.
if command -v python3 >/dev/null; then
	pydir=$(python3 - "$prefix" <<'EOF'
import sys, sysconfig
prefix = sys.argv[1].rstrip("/")
on_path = [p for p in sys.path if p.startswith(prefix + "/lib/") and p.endswith("-packages")]
print(on_path[0] if on_path else sysconfig.get_path(
    "purelib", "posix_prefix", vars={"base": prefix, "platbase": prefix}))
EOF
	)
	install -d "$dest$pydir/bfi"
	install -m 644 tools/python/bfi/__init__.py "$dest$pydir/bfi/"
	printf '# written by ninja install: where this module finds libbfi\nLIBRARY = "%s"\n' \
		"$prefix/lib/libbfi.so.2" >"$dest$pydir/bfi/_libpath.py"
	chmod 644 "$dest$pydir/bfi/_libpath.py"
	echo "installed the Python module into $dest$pydir/bfi"
fi

# a real install (no DESTDIR) by root: the linker's cache learns the new library
if [ -z "$dest" ] && [ "$(id -u)" = 0 ] && command -v ldconfig >/dev/null; then
	ldconfig
fi
echo "installed bfi into $root"
