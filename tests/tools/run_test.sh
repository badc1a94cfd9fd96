#!/bin/sh
# run_test.sh WRAPPER LIB PROBE SCRATCHDIR CASE
#
# Checks hipextsem-run (the build tree's or an installed copy): LD_PRELOAD
# composition, option handling, exit statuses.  PROBE (tests/tools/probe.c)
# prints what it was started with and exits with its first argument.
set -u
[ $# -eq 5 ] || { echo "usage: run_test.sh WRAPPER LIB PROBE SCRATCHDIR CASE" >&2; exit 2; }
run=$1 lib=$2 probe=$3 scratch=$4 case=$5
version=${HX_TEST_VERSION:-}

tmp=$(mktemp -d "$scratch/run-test.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
unset LD_PRELOAD HIPEXTSEM_LIBRARY HIPEXTSEM_DEBUG HIPEXTSEM_TRACE

# meson hands over paths relative to the build directory.
probe=$(cd "$(dirname -- "$probe")" && pwd)/$(basename -- "$probe")

fail() { echo "FAIL [$case]: $*" >&2; [ -f "$tmp/out" ] && sed 's/^/  out: /' "$tmp/out" >&2; [ -f "$tmp/err" ] && sed 's/^/  err: /' "$tmp/err" >&2; exit 1; }

# go EXPECTED_STATUS CMD... : runs CMD, output in $tmp/out and $tmp/err.
go() {
	want=$1
	shift
	"$@" >"$tmp/out" 2>"$tmp/err"
	got=$?
	[ "$got" -eq "$want" ] || fail "'$*' exited $got, expected $want"
}
out_has() { grep -qF -- "$1" "$tmp/out" || fail "stdout lacks '$1'"; }
err_has() { grep -qF -- "$1" "$tmp/err" || fail "stderr lacks '$1'"; }
out_line() { grep -qxF -- "$1" "$tmp/out" || fail "stdout lacks the line '$1'"; }

case $case in
help)
	go 0 "$run" --help
	out_has "Usage: hipextsem-run [OPTIONS] [--] PROGRAM [ARGS...]"
	out_has "--trace FILE"
	out_has "--check"
	go 0 "$run" -h
	out_has "Usage: hipextsem-run"
	;;
version)
	go 0 "$run" --version
	out_line "hipextsem-run $version"
	;;
usage-errors)
	go 2 "$run"
	err_has "no program given"
	go 2 "$run" --bogus "$probe"
	err_has "unknown option '--bogus'"
	go 2 "$run" --trace
	err_has "--trace needs a file name"
	;;
preload-unset)
	go 0 "$run" "$probe"
	out_line "LD_PRELOAD=$lib"
	out_line "shim=$lib"
	out_line "HIPEXTSEM_DEBUG=(unset)"
	;;
preload-empty)
	LD_PRELOAD= go 0 "$run" "$probe"
	out_line "LD_PRELOAD=$lib"
	;;
preload-append)
	# Existing entries (a bare soname, an absolute path, space and colon
	# separated) are kept in order and the shim goes last.
	libm=libm.so.6
	libdl=$(for d in /lib/x86_64-linux-gnu /usr/lib/x86_64-linux-gnu /lib64 /usr/lib64 /lib /usr/lib; do [ -f "$d/libdl.so.2" ] && { echo "$d/libdl.so.2"; break; }; done)
	[ -n "$libdl" ] || libdl=libdl.so.2
	LD_PRELOAD="$libm $libdl" go 0 "$run" "$probe"
	out_line "LD_PRELOAD=$libm:$libdl:$lib"
	out_line "shim=$lib"
	LD_PRELOAD="$libm:$libdl" go 0 "$run" "$probe"
	out_line "LD_PRELOAD=$libm:$libdl:$lib"
	;;
preload-no-duplicate)
	# Already there (same path, or another path to the same file): unchanged.
	LD_PRELOAD="$lib:libm.so.6" go 0 "$run" "$probe"
	out_line "LD_PRELOAD=$lib:libm.so.6"
	ln -s "$lib" "$tmp/libextsem-link.so"
	LD_PRELOAD="libm.so.6 $tmp/libextsem-link.so" go 0 "$run" "$probe"
	out_line "LD_PRELOAD=libm.so.6:$tmp/libextsem-link.so"
	# Nested wrappers add it once.
	go 0 "$run" "$run" "$probe"
	out_line "LD_PRELOAD=$lib"
	# A glob-looking entry is passed on untouched, not expanded.
	LD_PRELOAD='libm.so.6:/no/such/*.so' go 0 "$run" "$probe"
	out_line "LD_PRELOAD=libm.so.6:/no/such/*.so:$lib"
	;;
library-override)
	cp "$lib" "$tmp/libextsem.so"
	HIPEXTSEM_LIBRARY=$tmp/libextsem.so go 0 "$run" "$probe"
	out_line "LD_PRELOAD=$tmp/libextsem.so"
	out_line "shim=$tmp/libextsem.so"
	;;
exit-status)
	go 0 "$run" "$probe" 0
	go 42 "$run" "$probe" 42
	go 1 "$run" -- false
	go 3 "$run" sh -c 'exit 3'
	;;
missing-program)
	go 127 "$run" "$tmp/no-such-program"
	err_has "hipextsem-run: $tmp/no-such-program: no such file"
	go 127 "$run" hipextsem-no-such-command
	err_has "hipextsem-no-such-command: command not found"
	: >"$tmp/not-executable"
	go 126 "$run" "$tmp/not-executable"
	err_has "not an executable file"
	;;
missing-library)
	HIPEXTSEM_LIBRARY=$tmp/nowhere/libextsem.so go 126 "$run" "$probe"
	err_has "the shim library $tmp/nowhere/libextsem.so is missing"
	[ -s "$tmp/out" ] && fail "the program ran although the library is missing"
	;;
verbose)
	go 0 "$run" -v "$probe"
	out_line "HIPEXTSEM_DEBUG=2"
	err_has "hipextsem-run: LD_PRELOAD=$lib"
	go 0 "$run" -vv "$probe"
	out_line "HIPEXTSEM_DEBUG=3"
	go 0 "$run" -v -v "$probe"
	out_line "HIPEXTSEM_DEBUG=3"
	HIPEXTSEM_DEBUG=1 go 0 "$run" "$probe"
	out_line "HIPEXTSEM_DEBUG=1"
	;;
trace)
	(cd "$tmp" && "$run" --trace rel.json "$probe") >"$tmp/out" 2>"$tmp/err" || fail "--trace run failed"
	out_line "HIPEXTSEM_TRACE=$(cd "$tmp" && pwd -P)/rel.json"
	go 0 "$run" --trace="$tmp/abs.json" "$probe"
	out_line "HIPEXTSEM_TRACE=$tmp/abs.json"
	;;
check-host)
	# No render node on the build machine: the diagnostics say so and fail.
	ls /dev/dri/renderD* >/dev/null 2>&1 && { echo "render nodes present: skipped"; exit 77; }
	go 1 "$run" --check
	out_has "Verdict: external semaphores will NOT work: no DRM render node exists"
	out_has "Shim:           $lib"
	go 1 "$run" --check "$probe"
	;;
cwd-shim)
	# The installed launcher started as `bash hipextsem-run` (bash finds it
	# in PATH, $0 has no slash) from a directory with a libextsem.so
	# planted where the installed one would be relative to the script: the
	# planted file is never preloaded; the installed copy is.
	command -v bash >/dev/null 2>&1 || { echo "no bash: skipped"; exit 77; }
	inst=$run.install
	[ -f "$inst" ] || fail "no installed launcher at $inst"
	rel=$(sed -n "s/^lib_rel='\(.*\)'\$/\1/p" "$inst")
	case $rel in
	'' | /*) echo "libdir is not relative to bindir here: skipped"; exit 77 ;;
	esac
	mkdir -p "$tmp/prefix/bin" "$tmp/work/bin"
	cp "$inst" "$tmp/prefix/bin/hipextsem-run"
	chmod +x "$tmp/prefix/bin/hipextsem-run"
	planted=$tmp/work/bin/$rel
	mkdir -p "$(dirname -- "$planted")"
	cp "$lib" "$planted"
	planted=$(cd "$(dirname -- "$planted")" && pwd -P)/libextsem.so
	# No installed library yet: the launcher must say so, not fall back on
	# the planted one.
	(cd "$tmp/work/bin" && PATH="$tmp/prefix/bin:$PATH" bash hipextsem-run "$probe") \
		>"$tmp/out" 2>"$tmp/err"
	got=$?
	grep -qF "$planted" "$tmp/out" "$tmp/err" && fail "preloaded the planted $planted"
	[ "$got" -eq 126 ] || fail "exited $got without an installed library, expected 126"
	err_has "is missing or unreadable"
	# With the installed library in place: that one.
	installed=$tmp/prefix/bin/$rel
	mkdir -p "$(dirname -- "$installed")"
	cp "$lib" "$installed"
	installed=$(cd "$(dirname -- "$installed")" && pwd -P)/libextsem.so
	(cd "$tmp/work/bin" && PATH="$tmp/prefix/bin:$PATH" bash hipextsem-run "$probe") \
		>"$tmp/out" 2>"$tmp/err" || fail "bash hipextsem-run failed"
	out_line "LD_PRELOAD=$installed"
	grep -qF "$planted" "$tmp/out" && fail "preloaded the planted $planted"
	# Started by a path: the same.
	(cd "$tmp/work/bin" && bash "$tmp/prefix/bin/hipextsem-run" "$probe") \
		>"$tmp/out" 2>"$tmp/err" || fail "bash PATH/hipextsem-run failed"
	out_line "LD_PRELOAD=$installed"
	;;
check-options)
	# --check takes -v before or after it, and PROGRAM after both.
	go_any() { "$@" >"$tmp/out" 2>"$tmp/err"; got=$?; [ "$got" -le 1 ] || fail "'$*' exited $got"; }
	go_any "$run" --check -v "$probe"
	out_has "Verdict:"
	go_any "$run" -v --check "$probe"
	out_has "Verdict:"
	go 2 "$run" --check "$probe" "$probe"
	err_has "--check takes at most one PROGRAM"
	;;
*)
	echo "unknown case $case" >&2
	exit 2
	;;
esac
echo "ok: $case"
