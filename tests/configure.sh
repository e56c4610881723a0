#!/bin/sh
# configure.sh - configure asks for what its mode needs: a release build the
# library's and the command's packages, the test modes the tests' as well;
# --help lists both sets. Run on a copy of configure alone, with a
# dpkg-query that finds no package installed and --no-install, so it stops
# at the package check and writes nothing.
# Usage: sh tests/configure.sh    (from the source root; tests/run.sh does this)
T=$(mktemp -d "${TMPDIR:-/tmp}/bfi-configure.XXXXXX")
trap 'rm -rf "$T"' EXIT
SUITE=configure
. "$(dirname "$0")/lib/check.sh"

mkdir "$T/bin" && cp configure "$T/" &&
	printf '#!/bin/sh\necho "install ok not-installed"\n' >"$T/bin/dpkg-query" &&
	chmod +x "$T/bin/dpkg-query" || { echo "FAIL $SUITE: no scratch copy"; exit 1; }

# missing MODE: the packages configure asks for in MODE
missing() {
	(cd "$T" && PATH="$T/bin:$PATH" sh ./configure --mode="$1" --no-install 2>&1) |
		sed -n 's/.*apt-get install -y//p'
}
modes() {
	rel=$(missing release) && san=$(missing sanitize) || return 1
	for p in liblmdb-dev libzstd-dev liblzma-dev libbz2-dev libmicrohttpd-dev; do
		echo "$rel" | grep -qw -- "$p" || { echo "release does not ask for $p: $rel"; return 1; }
		echo "$san" | grep -qw -- "$p" || { echo "sanitize does not ask for $p: $san"; return 1; }
	done
	for p in python3-pip python3-numpy; do
		echo "$rel" | grep -qw -- "$p" && { echo "release asks for the tests' $p: $rel"; return 1; }
		echo "$san" | grep -qw -- "$p" || { echo "sanitize does not ask for $p: $san"; return 1; }
	done
	[ ! -e "$T/build.ninja" ]
}
check "a release build asks for the build's packages, the test modes for the tests' too" modes
helps() {
	sh ./configure --help >"$T/help" &&
		grep -A3 "build's packages" "$T/help" | grep -q liblmdb-dev &&
		grep -A3 "adds the tests'" "$T/help" | grep -q chromium
}
check "configure --help lists the build's packages and the tests'" helps
