#!/bin/bash
# vm_cache_test.sh: the test VM's cached kernel/ counts as ready only when it
# was built from the current module list (scripts/lib/vm.sh), so that a
# cache made before a module was added (vgem) is built again, on CI too.
# Runs on the host against a fake cache; never downloads or boots anything.
# shellcheck disable=SC2086 # the module list is split into words on purpose
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
check() { # WANT(ready|stale) WHAT
	if hx_vm_kernel_ready; then got=ready; else got=stale; fi
	if [ "$got" = "$1" ]; then
		echo "ok: $2: $got"
	else
		echo "FAIL: $2: $got, expected $1"
		fails=$((fails + 1))
	fi
}
export HX_ROOT=$root HX_VM_CACHE=$tmp
# shellcheck source=../../scripts/lib/vm.sh
. "$root/scripts/lib/vm.sh"
case " $(printf '%s ' $HX_VM_MODULES)" in
*" virtio_gpu vgem "*) echo "ok: vgem is loaded right after virtio_gpu" ;;
*) echo "FAIL: HX_VM_MODULES does not load vgem right after virtio_gpu"; fails=$((fails + 1)) ;;
esac
mkdir -p "$tmp/kernel/modules"
echo 6.12.0-test >"$tmp/kernel/VERSION"
: >"$tmp/kernel/vmlinuz"
printf '%s\n' $HX_VM_MODULES >"$tmp/kernel/modules/load.list"
check stale "a cache without a module-list record (made before it existed)"
hx_vm_modules_sum >"$tmp/kernel/MODULES"
check ready "a cache built from the current list"
saved=$HX_VM_MODULES
HX_VM_MODULES=$(printf '%s\n' $saved | grep -vx vgem)
hx_vm_modules_sum >"$tmp/kernel/MODULES"
HX_VM_MODULES=$saved
check stale "a cache built before vgem was added to the list"
hx_vm_modules_sum >"$tmp/kernel/MODULES"
HX_VM_MODULES="$saved virtio_input"
check stale "the list gains one more module"
HX_VM_MODULES=$(printf '%s\n' $saved)
check ready "the same list, other white space"
HX_VM_MODULES=$saved
rm "$tmp/kernel/modules/load.list"
check stale "a cache without its module load list"
[ "$fails" -eq 0 ] || { echo "$fails check(s) failed"; exit 1; }
