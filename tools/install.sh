#!/bin/sh
# install.sh DESTDIR PREFIX - run by `ninja install`: headers, libraries,
# the bfi command and bfi.pc, staged under DESTDIR when it is set.
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
install -m 644 reader/bfi.h writer/bfi_writer.h format/bfi_error.h format/bfi_hash.h format/bfi_text.h format/bfi_catalog.h format/bfi_layout.h format/bfi_seq.h \
	"$root/include/bfi/"
sed "s|^prefix=.*|prefix=$prefix|" bfi.pc >"$root/lib/pkgconfig/bfi.pc"
chmod 644 "$root/lib/pkgconfig/bfi.pc"
echo "installed bfi into $root"
