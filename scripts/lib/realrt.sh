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
