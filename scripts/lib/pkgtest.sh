# A Debian userland to install the project's packages into, for
# tests/package/run-package-test.  Source after common.sh, vm.sh and
# realrt.sh; do not run.
# shellcheck shell=bash
#
# The real-runtime userlands (.cache/realrt, realrt.sh) are extracted files
# with no package database: programs run on them, nothing is installed into
# them.  The package test needs one that dpkg can install into, so that the
# packages' dependencies are checked and their files land at the paths a
# user gets.  It is made the same way (mmdebstrap, from the mirror the
# machine's apt configuration names), once, under .cache/pkgtest/:
#
#   sid   Debian's Essential set (dpkg, a shell, coreutils), libdrm2,
#         libelf, and libamdhip64-6 (HIP 6.4.3) installed as a user
#         installs it; HIP 7.2 comes from .cache/realrt/7.2 (experimental
#         with its own HSA runtime, which does not fit sid's 6.4).
#
# Every run installs into a fresh copy (hx_pkgtest_clone: the big /usr
# tree hard-linked, the rest copied), never into the cached one.

HX_PKGTEST_DIR=${HX_PKGTEST_DIR:-$HX_ROOT/.cache/pkgtest}
HX_PKGTEST_BASE=$HX_PKGTEST_DIR/sid

# hx_pkgtest_setup: makes the base userland if it is missing.  Fails
# (status 1, with the reason) if it cannot: the caller must not skip.
hx_pkgtest_setup() {
	local uri root=$HX_PKGTEST_BASE
	[ -e "$root/.done" ] && return 0
	hx_need_packages mmdebstrap
	uri=$(hx_vm_mirror_uri) ||
		{ hx_log "no Debian mirror in /etc/apt: cannot make the package-test userland"; return 1; }
	rm -rf "$root"
	mkdir -p "$HX_PKGTEST_DIR"
	hx_log "setup: Debian sid with HIP 6.4 into $root"
	mmdebstrap --quiet --variant=essential --include=libamdhip64-6,libdrm2,libelf1 \
		--aptopt='Acquire::Check-Valid-Until "false"' \
		sid "$root" "deb $uri sid main" >"$HX_PKGTEST_DIR/sid.log" 2>&1 ||
		{ tail -20 "$HX_PKGTEST_DIR/sid.log" >&2; return 1; }
	[ -x "$root/usr/bin/dpkg" ] && [ -e "$root/usr/lib/x86_64-linux-gnu/libamdhip64.so.6" ] ||
		{ hx_log "the package-test userland has no dpkg or no HIP 6.4"; return 1; }
	touch "$root/.done"
}

# hx_pkgtest_clone DIR [BASE]: a fresh copy of the base userland (or of
# BASE) at DIR.  /usr is hard-linked (dpkg and ldconfig replace files by
# renaming, so the base's files are never written through the links); /etc
# and /var are copied.
hx_pkgtest_clone() {
	local dir=$1 base=${2:-$HX_PKGTEST_BASE} top
	rm -rf "$dir"
	mkdir -p "$dir"
	for top in "$base"/* "$base"/.done; do
		case ${top##*/} in
		usr) cp -al "$top" "$dir/" 2>/dev/null || cp -a "$top" "$dir/" ;;
		*) cp -a "$top" "$dir/" ;;
		esac || return 1
	done
}

# hx_pkgtest_run DIR CMD...: runs CMD inside the userland at DIR (chroot,
# as root) with its own /proc and a clean environment: nothing of this
# machine's (LD_LIBRARY_PATH and the like) leaks in, so what works there
# works without configuration.  The /proc mount lives in a private mount
# namespace and vanishes with it.
hx_pkgtest_run() {
	local dir=$1
	shift
	unshare --mount --propagation private sh -c '
		root=$1
		shift
		mount -t proc proc "$root/proc" || exit 125
		exec chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
			HOME=/root TMPDIR=/tmp "$@"' sh "$dir" "$@"
}

# ---- a build userland without HIP, for tests/package/run-rocm-layout ------
# Debian 12 (its Meson 1.0.1 is the oldest the project supports) with the
# build dependencies and no HIP package: the project must configure, build
# and install there, with AMD's /opt/rocm layout simulated in a copy.
HX_PKGTEST_BUILD=$HX_PKGTEST_DIR/build-bookworm
HX_PKGTEST_BUILD_DEPS=gcc,libc6-dev,meson,ninja-build,pkgconf,libdrm-dev,libelf-dev,python3

# hx_pkgtest_build_setup: makes it once (under a lock, so that two runs
# never make it at the same time).  Fails (status 1, with the reason) if it
# cannot: the caller must not skip.
hx_pkgtest_build_setup() {
	local root=$HX_PKGTEST_BUILD uri rc
	[ -e "$root/.done" ] && return 0
	mkdir -p "$HX_PKGTEST_DIR"
	(
		flock 9 || exit 1
		[ -e "$root/.done" ] && exit 0
		hx_need_packages mmdebstrap
		uri=$(hx_vm_mirror_uri) ||
			{ hx_log "no Debian mirror in /etc/apt: cannot make the build userland"; exit 1; }
		rm -rf "$root"
		hx_log "setup: Debian 12 with the build dependencies (no HIP) into $root"
		mmdebstrap --quiet --variant=essential --include="$HX_PKGTEST_BUILD_DEPS" \
			--aptopt='Acquire::Check-Valid-Until "false"' \
			bookworm "$root" "deb $uri bookworm main" >"$HX_PKGTEST_DIR/build-bookworm.log" 2>&1 ||
			{ tail -20 "$HX_PKGTEST_DIR/build-bookworm.log" >&2; exit 1; }
		[ -x "$root/usr/bin/meson" ] && [ -x "$root/usr/bin/gcc" ] ||
			{ hx_log "the build userland has no meson or no gcc"; exit 1; }
		if ls "$root"/usr/lib/*/libamdhip64* "$root"/usr/include/hip >/dev/null 2>&1; then
			hx_log "the build userland has HIP installed: it must not"
			exit 1
		fi
		touch "$root/.done"
	) 9>"$HX_PKGTEST_DIR/build-bookworm.lock"
	rc=$?
	return $rc
}
