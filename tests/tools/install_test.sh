#!/bin/sh
# install_test.sh MESON BUILDDIR SCRATCH PROBE PYTHON VERSION PREFIX BINDIR LIBDIR MANDIR
#                 REGRESS_APP REGRESS_RUNTIME_DIR REGRESS_PROBE
#
# `meson install --destdir` into a scratch directory, then runs the
# installed tools from there: the installed hipextsem-run must preload the
# installed libextsem.so (found relative to itself, no HIPEXTSEM_LIBRARY),
# the installed hipextsem-info must check that same copy, the installed
# hipextsem-regress must preload it too (no --shim, no HIPEXTSEM_SHIM):
# REGRESS_APP on the runtime in REGRESS_RUNTIME_DIR passes, REGRESS_PROBE
# (whose output says whether the shim is loaded) fails; and the pkg-config
# file and man pages must be in place.
set -u
[ $# -eq 13 ] || { echo "usage: install_test.sh MESON BUILDDIR SCRATCH PROBE PYTHON VERSION PREFIX BINDIR LIBDIR MANDIR REGRESS_APP REGRESS_RUNTIME_DIR REGRESS_PROBE" >&2; exit 2; }
meson=$1 build=$2 scratch=$3 probe=$4 python=$5 version=$6 prefix=$7 bindir=$8 libdir=$9
shift 9
mandir=$1 regress_app=$2 regress_rt=$3 regress_probe=$4

# meson hands over paths relative to the build directory.
abs() { printf '%s/%s' "$(cd "$(dirname -- "$1")" && pwd)" "$(basename -- "$1")"; }
probe=$(abs "$probe")
regress_app=$(abs "$regress_app")
regress_rt=$(cd "$regress_rt" && pwd)
regress_probe=$(abs "$regress_probe")

fail() { echo "FAIL: $*" >&2; exit 1; }
dest=$(mktemp -d "$scratch/install.XXXXXX") || exit 99
trap 'rm -rf "$dest"' EXIT
unset LD_PRELOAD HIPEXTSEM_LIBRARY HIPEXTSEM_SHIM HIPEXTSEM_DEBUG HIPEXTSEM_TRACE HIPEXTSEM_RENDER_NODE

"$meson" install -C "$build" --destdir "$dest" >"$dest.log" 2>&1 ||
	{ cat "$dest.log" >&2; rm -f "$dest.log"; fail "meson install failed"; }
rm -f "$dest.log"

root=$dest$prefix
case $bindir in /*) bin=$dest$bindir ;; *) bin=$root/$bindir ;; esac
case $libdir in /*) lib=$dest$libdir ;; *) lib=$root/$libdir ;; esac
case $mandir in /*) man=$dest$mandir ;; *) man=$root/$mandir ;; esac

tools="hipextsem-run hipextsem-info hipextsem-regress hipextsem-abicheck"
for t in $tools; do
	[ -f "$bin/$t" ] && [ -x "$bin/$t" ] || fail "$bin/$t not installed (or not executable)"
	f=$man/man1/$t.1
	[ -f "$f" ] || fail "$f not installed"
	head -n 20 "$f" | grep -q "^\.TH $(echo "$t" | tr a-z A-Z) 1 " || fail "$f is not $t's man page"
done
for f in "$lib/libextsem.so" "$lib/pkgconfig/hipextsem.pc"; do
	[ -f "$f" ] || fail "$f not installed"
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

# The installed regression check, with no shim named: it preloads the
# installed copy, passes a HIP program the shim must not change, and
# catches a program whose output does change.
out=$("$bin/hipextsem-regress" --version) || fail "installed hipextsem-regress --version failed"
[ "$out" = "hipextsem-regress $version" ] || fail "hipextsem-regress --version says '$out'"
"$bin/hipextsem-regress" --env "LD_LIBRARY_PATH=$regress_rt" "$regress_app" nosem >"$dest/out" 2>&1 ||
	{ cat "$dest/out" >&2; fail "installed hipextsem-regress: $regress_app nosem differs with the shim"; }
grep -qxF "hipextsem-regress: 1 passed, 0 failed (shim: $shim)" "$dest/out" ||
	{ cat "$dest/out" >&2; fail "installed hipextsem-regress did not use the installed library"; }
"$bin/hipextsem-regress" "$regress_probe" >"$dest/out" 2>&1
rc=$?
[ $rc -eq 1 ] && grep -qxF "hipextsem-regress: 0 passed, 1 failed (shim: $shim)" "$dest/out" ||
	{ cat "$dest/out" >&2; fail "installed hipextsem-regress missed the probe's difference (status $rc)"; }

if command -v pkg-config >/dev/null 2>&1; then
	v=$(PKG_CONFIG_PATH="$lib/pkgconfig" pkg-config --variable=libextsem hipextsem) ||
		fail "pkg-config cannot read hipextsem.pc"
	case $libdir in /*) want=$libdir/libextsem.so ;; *) want=$prefix/$libdir/libextsem.so ;; esac
	[ "$v" = "$want" ] || fail "pkg-config libextsem=$v, expected $want"
	v=$(PKG_CONFIG_PATH="$lib/pkgconfig" pkg-config --variable=hipextsem_regress hipextsem)
	case $bindir in /*) want=$bindir/hipextsem-regress ;; *) want=$prefix/$bindir/hipextsem-regress ;; esac
	[ "$v" = "$want" ] || fail "pkg-config hipextsem_regress=$v, expected $want"
	v=$(PKG_CONFIG_PATH="$lib/pkgconfig" pkg-config --modversion hipextsem)
	[ "$v" = "$version" ] || fail "pkg-config version $v"
fi
echo "ok: install"
