# Shared helpers for the scripts in scripts/.  Source it; do not run it.
# shellcheck shell=bash

HX_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
HX_BUILD=${HX_BUILD:-$HX_ROOT/build}

# Packages the project needs on Debian 12, for building and for the tests
# (libhsa-runtime-dev: the HSA headers of the fake AMD device, tests/fakedev;
# libamdhip64-dev depends on it too).  Every module the tests import and
# every tool they call is named here or installed by the script that needs
# it (mmdebstrap: scripts/lib/pkgtest.sh, scripts/lib/realrt.sh; debhelper,
# dpkg-dev, lintian: tests/package/run-package-test):
#   python3-hypothesis  the randomized workload (tests/workload/hxwork)
#   gdb                 the stacks of a VM case that hangs (tests/vm/run-cases)
#                       and of a workload run that hangs (HXWORK_STACKS=1)
#   zstd                kernel modules shipped as .ko.zst (scripts/lib/vm.sh)
#   clang, libclang-rt-14-dev  the fuzz suite (tests/fuzz)
# nm, readelf and strings come with gcc (binutils).
HX_BUILD_PACKAGES="gcc pkg-config meson ninja-build libdrm-dev libelf-dev"
HX_TEST_PACKAGES="libamdhip64-dev libhsa-runtime-dev qemu-system-x86 busybox-static xz-utils zstd cpio python3 python3-hypothesis gdb clang libclang-rt-14-dev"

hx_log() { printf '%s: %s\n' "${HX_PROG:-hipextsem}" "$*" >&2; }
hx_die() { hx_log "error: $*"; exit 1; }

hx_as_root() {
	if [ "$(id -u)" -eq 0 ]; then
		"$@"
	elif command -v sudo >/dev/null 2>&1; then
		sudo ${DEBIAN_FRONTEND:+DEBIAN_FRONTEND="$DEBIAN_FRONTEND"} "$@" # sudo resets the environment: apt must not prompt
	else
		hx_die "need root to run: $* (install sudo or run as root)"
	fi
}

# hx_need_packages PKG...: installs whichever of PKG is not installed yet.
hx_need_packages() {
	local missing=() p
	for p in "$@"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
			missing+=("$p")
	done
	[ ${#missing[@]} -eq 0 ] && return 0
	command -v apt-get >/dev/null 2>&1 ||
		hx_die "missing packages (${missing[*]}) and no apt-get to install them"
	hx_log "installing: ${missing[*]}"
	if [ -z "${HX_APT_UPDATED:-}" ]; then
		hx_as_root apt-get update -qq >/dev/null || hx_die "apt-get update failed"
		HX_APT_UPDATED=1
	fi
	DEBIAN_FRONTEND=noninteractive hx_as_root apt-get install -y -qq --no-install-recommends \
		"${missing[@]}" >/dev/null || hx_die "apt-get install ${missing[*]} failed"
}

# hx_configure [BUILD_DIR] [meson options...]: sets up (or reconfigures) a build.
hx_configure() {
	local dir=${1:-$HX_BUILD}
	shift || true
	if [ -f "$dir/build.ninja" ]; then
		[ $# -gt 0 ] && meson configure "$dir" "$@" >/dev/null
		return 0
	fi
	meson setup "$dir" "$HX_ROOT" "$@" >/dev/null || hx_die "meson setup $dir failed"
}
