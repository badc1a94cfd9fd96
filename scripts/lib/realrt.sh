# AMD's real HIP runtimes as Debian packages them, for tests/realrt.
# Source after common.sh and vm.sh; do not run.
# shellcheck shell=bash
#
# Debian 12 has HIP 5.2.3 installed system-wide.  The newer runtimes need
# a newer glibc, so each gets its own extracted userland under
# .cache/realrt/<version>/ (mmdebstrap --variant=extract: files only, no
# chroot, no root-owned state), from the mirror the machine's apt
# configuration names:
#
#   5.7  trixie        libamdhip64-5 5.7.1
#   6.4  sid           libamdhip64-6 6.4.3 and libamdhip64-dev (6.4 headers)
#   7.2  experimental  libamdhip64-7 7.2.4 and libamdhip64-dev (7.2 headers),
#                      with its own HSA runtime and comgr (sid's
#                      libhsa-runtime64-1 does not fit 5.x, hence one
#                      folder per runtime)
#
# Programs built here run there through that userland's own dynamic
# loader (hx_realrt_run).  Each folder is made once and kept; a folder
# without its .done stamp is made again.

HX_REALRT_DIR=${HX_REALRT_DIR:-$HX_ROOT/.cache/realrt}
HX_REALRT_VERSIONS="5.7 6.4 7.2"

# hx_realrt_libdir VERSION: the folder holding that runtime's libraries.
hx_realrt_libdir() { printf '%s/%s/usr/lib/x86_64-linux-gnu\n' "$HX_REALRT_DIR" "$1"; }

# hx_realrt_accept_prog VERSION BUILD_DIR LOG_DIR: the acceptance program
# (tests/realrt/accept.c) for that release: 5.2 and 5.7 run the meson-built
# accept-abi5 (Debian's 5.2 headers); 6.4 and 7.2 get a copy compiled here
# against the release's own headers.  Prints its path.
hx_realrt_accept_prog() {
	local ver=$1 b=$2 logs=$3 root lib so out
	case $ver in
	5.2 | 5.7) echo "$b/tests/realrt/accept-abi5"; return 0 ;;
	6.4) so=libamdhip64.so.6 ;;
	7.2) so=libamdhip64.so.7 ;;
	*) echo "unknown release $ver" >&2; return 1 ;;
	esac
	root=$HX_REALRT_DIR/$ver
	lib=$(hx_realrt_libdir "$ver")
	out=$b/tests/realrt/accept-$ver
	# Linked here against a library whose own dependencies need a newer
	# glibc than the host's: those are resolved in the VM, on the release.
	# shellcheck disable=SC2046
	cc -O1 -g -D__HIP_PLATFORM_AMD__ -Wno-deprecated-declarations \
		-I"$root/usr/include" -I"$HX_ROOT/include" $(pkg-config --cflags libdrm) \
		-o "$out" "$HX_ROOT/tests/realrt/accept.c" -I"$HX_ROOT/tests/shim" \
		-L"$lib" -l:$so $(pkg-config --libs libdrm) -lpthread \
		-Wl,--unresolved-symbols=ignore-in-shared-libs >"$logs/build-accept-$ver.log" 2>&1 ||
		{ cat "$logs/build-accept-$ver.log" >&2; return 1; }
	echo "$out"
}

# hx_realrt_accept_targets VERSION: the fake targets a CI run gives the
# acceptance program on that release (one each, each target on two
# releases: 5.2 gfx1030, where the wait-value attribute reads 0, 5.7
# gfx900, 6.4 gfx900, 7.2 gfx1030).
hx_realrt_accept_targets() {
	case $1 in 5.2 | 7.2) echo gfx1030 ;; *) echo gfx900 ;; esac
}

# hx_realrt_run VERSION CMD...: runs a host-built CMD on that userland.
hx_realrt_run() {
	local lib
	lib=$(hx_realrt_libdir "$1")
	shift
	"$lib/ld-linux-x86-64.so.2" --library-path "$lib" "$@"
}

hx_realrt_make() {
	local ver=$1 uri=$2 root=$HX_REALRT_DIR/$1 suite pkgs hook= extra=()
	case $ver in
	5.7) suite=trixie pkgs=libamdhip64-5 ;;
	6.4) suite=sid pkgs=libamdhip64-dev ;;
	7.2)
		suite=sid pkgs=libamdhip64-dev
		extra=("deb $uri experimental main")
		# Only the HIP stack from experimental, the rest from sid.
		hook='mkdir -p "$1/etc/apt/preferences.d" && printf "Package: libamdhip64-7 libamdhip64-dev libhiprtc7 libhiprtc-builtins7 libhsa-runtime64-1 libhsa-runtime-dev libamd-comgr3 libamd-comgr-dev\nPin: release a=experimental\nPin-Priority: 990\n" >"$1/etc/apt/preferences.d/hip"'
		;;
	*) hx_die "unknown runtime version $ver" ;;
	esac
	rm -rf "$root"
	mkdir -p "$HX_REALRT_DIR"
	hx_log "setup: HIP $ver from Debian $suite into $root"
	mmdebstrap --quiet --variant=extract --include="$pkgs,libdrm2,libelf1" \
		--aptopt='Acquire::Check-Valid-Until "false"' \
		${hook:+--setup-hook="$hook"} \
		"$suite" "$root" "deb $uri $suite main" "${extra[@]}" >"$HX_REALRT_DIR/$ver.log" 2>&1 ||
		{ tail -20 "$HX_REALRT_DIR/$ver.log" >&2; return 1; }
	[ -x "$(hx_realrt_libdir "$ver")/ld-linux-x86-64.so.2" ] ||
		{ hx_log "the $ver userland has no dynamic loader"; return 1; }
	touch "$root/.done"
}

# hx_realrt_setup: makes every userland that is missing.  Fails (status 1,
# with the reason) if one cannot be made: the caller must not skip.
hx_realrt_setup() {
	local ver uri
	for ver in $HX_REALRT_VERSIONS; do
		[ -e "$HX_REALRT_DIR/$ver/.done" ] && continue
		hx_need_packages mmdebstrap
		uri=$(hx_vm_mirror_uri) ||
			{ hx_log "no Debian mirror in /etc/apt: cannot fetch the real HIP runtimes"; return 1; }
		hx_realrt_make "$ver" "$uri" ||
			{ hx_log "cannot build the Debian userland for HIP $ver (see $HX_REALRT_DIR/$ver.log)"; return 1; }
	done
}
