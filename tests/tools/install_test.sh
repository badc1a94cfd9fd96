#!/bin/sh
# install_test.sh MESON BUILDDIR SCRATCH PROBE PYTHON VERSION PREFIX BINDIR LIBDIR MANDIR
#
# `meson install --destdir` into a scratch directory, then runs the
# installed tools from there: the installed hipextsem-run must preload the
# installed libextsem.so (found relative to itself, no HIPEXTSEM_LIBRARY),
# the installed hipextsem-info must check that same copy, and the
# pkg-config file and man pages must be in place.
set -u
[ $# -eq 10 ] || { echo "usage: install_test.sh MESON BUILDDIR SCRATCH PROBE PYTHON VERSION PREFIX BINDIR LIBDIR MANDIR" >&2; exit 2; }
meson=$1 build=$2 scratch=$3 probe=$4 python=$5 version=$6 prefix=$7 bindir=$8 libdir=$9
shift 9
mandir=$1

# meson hands over paths relative to the build directory.
probe=$(cd "$(dirname -- "$probe")" && pwd)/$(basename -- "$probe")

fail() { echo "FAIL: $*" >&2; exit 1; }
dest=$(mktemp -d "$scratch/install.XXXXXX") || exit 99
trap 'rm -rf "$dest"' EXIT
unset LD_PRELOAD HIPEXTSEM_LIBRARY HIPEXTSEM_DEBUG HIPEXTSEM_TRACE HIPEXTSEM_RENDER_NODE

"$meson" install -C "$build" --destdir "$dest" >"$dest.log" 2>&1 ||
	{ cat "$dest.log" >&2; rm -f "$dest.log"; fail "meson install failed"; }
rm -f "$dest.log"

root=$dest$prefix
case $bindir in /*) bin=$dest$bindir ;; *) bin=$root/$bindir ;; esac
case $libdir in /*) lib=$dest$libdir ;; *) lib=$root/$libdir ;; esac
case $mandir in /*) man=$dest$mandir ;; *) man=$root/$mandir ;; esac

for f in "$bin/hipextsem-run" "$bin/hipextsem-info"; do
	[ -f "$f" ] && [ -x "$f" ] || fail "$f not installed (or not executable)"
done
for f in "$lib/libextsem.so" "$lib/pkgconfig/hipextsem.pc" \
	"$man/man1/hipextsem-run.1" "$man/man1/hipextsem-info.1"; do
	[ -f "$f" ] || fail "$f not installed"
done
for f in "$man/man1/hipextsem-run.1" "$man/man1/hipextsem-info.1"; do
	head -n 20 "$f" | grep -q '^\.TH ' || fail "$f is not a man page"
done
shim=$(cd "$lib" && pwd -P)/libextsem.so
echo "installed into $dest"

out=$("$bin/hipextsem-run" --version) || fail "installed hipextsem-run --version failed"
[ "$out" = "hipextsem-run $version" ] || fail "--version says '$out'"

# The installed wrapper preloads the installed library, whether started by
# path or through PATH, and propagates the exit status.
"$bin/hipextsem-run" "$probe" 7 >"$dest/out" 2>&1
rc=$?
[ $rc -eq 7 ] || { cat "$dest/out" >&2; fail "exit status $rc, expected 7"; }
grep -qxF "shim=$shim" "$dest/out" || { cat "$dest/out" >&2; fail "the installed library was not the one preloaded"; }
grep -qxF "LD_PRELOAD=$shim" "$dest/out" || fail "LD_PRELOAD is not the installed library"
PATH="$bin:$PATH" hipextsem-run "$probe" >"$dest/out" 2>&1 || fail "run through PATH failed"
grep -qxF "shim=$shim" "$dest/out" || { cat "$dest/out" >&2; fail "through PATH: wrong library"; }

# The installed diagnostics check the installed library.
"$bin/hipextsem-info" --json >"$dest/info.json"
rc=$?
[ $rc -le 1 ] || fail "installed hipextsem-info exited $rc"
"$python" - "$dest/info.json" "$shim" "$rc" <<'PY' || fail "installed hipextsem-info report"
import json, sys
d = json.load(open(sys.argv[1]))
sh = d['shim']
assert sh['found'] and sh['path'] == sys.argv[2], sh
assert sh['found_via'] == 'next to the executable', sh['found_via']
assert (d['verdict']['ok'] and sys.argv[3] == '0') or (not d['verdict']['ok'] and sys.argv[3] == '1')
PY
"$bin/hipextsem-run" --check >/dev/null 2>&1
rc=$?
[ $rc -le 1 ] || fail "installed hipextsem-run --check exited $rc (hipextsem-info not found?)"

if command -v pkg-config >/dev/null 2>&1; then
	v=$(PKG_CONFIG_PATH="$lib/pkgconfig" pkg-config --variable=libextsem hipextsem) ||
		fail "pkg-config cannot read hipextsem.pc"
	case $libdir in /*) want=$libdir/libextsem.so ;; *) want=$prefix/$libdir/libextsem.so ;; esac
	[ "$v" = "$want" ] || fail "pkg-config libextsem=$v, expected $want"
	v=$(PKG_CONFIG_PATH="$lib/pkgconfig" pkg-config --modversion hipextsem)
	[ "$v" = "$version" ] || fail "pkg-config version $v"
fi
echo "ok: install"
