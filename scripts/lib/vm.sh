# Test-VM helpers for scripts/vm-run.  Source it after common.sh; do not run it.
# shellcheck shell=bash
#
# Cache layout (all under $HX_VM_CACHE, git-ignored):
#   setup.lock         flock(1) lock serialising the one-time setup
#   apt/               private apt configuration (sources.list, lists, cache)
#   kernel/            the finished kernel: vmlinuz, initrd.gz, VERSION
#   runs/              one private results directory per vm-run invocation

HX_VM_CACHE=${HX_VM_CACHE:-$HX_ROOT/.cache/vm}

# Modules the guest needs (names as the kernel spells them, '_' not '-'),
# loaded in this order.  Ones that the kernel has built in are simply not
# found and skipped; dependencies are added from each module's depends=
# field.  vgem (a dma-buf whose fence stays pending until the test signals
# it) comes after virtio_gpu, so that renderD128 stays virtio-gpu's.  The
# cached kernel/ records the list it was built from (MODULES) and is built
# again when the list changes.
HX_VM_MODULES="virtio virtio_ring virtio_pci_legacy_dev virtio_pci_modern_dev virtio_pci
netfs 9pnet 9pnet_virtio 9p drm drm_kms_helper drm_shmem_helper virtio_dma_buf virtio_gpu
vgem"

# Prints the mirror URI serving bookworm, taken from the machine's apt config.
hx_vm_mirror_uri() {
	local f uri
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -f "$f" ] || continue
		# deb822: paragraphs separated by blank lines.
		uri=$(awk '
			BEGIN { RS = ""; FS = "\n" }
			{
				u = ""; ok = 0; deb = 0
				for (i = 1; i <= NF; i++) {
					line = $i
					if (line ~ /^[ \t]*#/) continue
					if (line ~ /^Types:/ && line ~ /[ \t]deb([ \t]|$)/) deb = 1
					if (line ~ /^URIs:/) { sub(/^URIs:[ \t]*/, "", line); split(line, a, /[ \t]+/); u = a[1] }
					if (line ~ /^Suites:/ && line ~ /[ \t]bookworm([ \t]|$)/) ok = 1
				}
				if (deb && ok && u != "") { print u; exit }
			}' "$f")
		[ -n "$uri" ] && { printf '%s\n' "$uri"; return 0; }
	done
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
		[ -f "$f" ] || continue
		uri=$(awk '
			$1 == "deb" {
				i = 2
				if ($i ~ /^\[/) { while (i <= NF && $i !~ /\]$/) i++; i++ }
				if ($(i + 1) == "bookworm") { print $i; exit }
			}' "$f")
		[ -n "$uri" ] && { printf '%s\n' "$uri"; return 0; }
	done
	return 1
}

# What the guest sees of the host (hx_vm_init_script): the host's root
# read-only and the repository writable at its own path, but its own
# /tmp and /run (empty tmpfs), /dev (devtmpfs, an empty /dev/shm), /proc
# and /sys.  A host file under one of those, outside the repository, is
# not there.
HX_VM_GUEST_OWN="/tmp /run /dev /proc /sys"

# hx_vm_hidden PATH: succeeds, printing the guest's own directory in its
# place, when the guest cannot see the host's PATH (symbolic links
# followed on the host; PATH need not exist).
hx_vm_hidden() {
	local p d
	p=$(readlink -m -- "$1") || return 1
	case $p/ in "$HX_ROOT"/* | "$(readlink -f -- "$HX_ROOT")"/*) return 1 ;; esac
	for d in $HX_VM_GUEST_OWN; do
		case $p/ in "$d"/*) printf '%s\n' "$d"; return 0 ;; esac
	done
	return 1
}

# hx_vm_need_visible VERB PATH: dies, naming PATH, why and what to do, when
# the guest cannot see it ("cannot VERB PATH in the test VM: ...").
hx_vm_need_visible() {
	local own real list
	own=$(hx_vm_hidden "$2") || return 0
	real=$(readlink -m -- "$2")
	[ "$real" = "$2" ] && real= || real=" ($real)"
	list=${HX_VM_GUEST_OWN// /, }
	hx_die "cannot $1 $2$real in the test VM: the guest mounts its own $own over the host's, so that file is not there. Put it in the repository ($HX_ROOT, for example under build/ or .cache/) or anywhere else outside ${list%, *} and ${list##*, }; a script that makes it with mktemp can mkdir -p $HX_ROOT/.cache/tmp and set TMPDIR to that"
}

# Runs apt-get/apt-cache with the private configuration in $HX_VM_CACHE/apt.
hx_vm_apt() {
	local tool=$1 a=$HX_VM_CACHE/apt
	shift
	"$tool" -q \
		-o Dir::Etc::SourceList="$a/sources.list" \
		-o Dir::Etc::SourceParts=/dev/null \
		-o Dir::State::Lists="$a/lists" \
		-o Dir::Cache="$a/cache" \
		-o Dir::State::status=/dev/null \
		-o APT::Sandbox::User=root \
		-o Debug::NoLocking=1 \
		"$@"
}

# Prints module names (normalised) listed in the depends= field of a .ko file.
hx_vm_ko_depends() {
	tr '\0' '\n' <"$1" | sed -n 's/^depends=//p' | head -n1 | tr ',' '\n' | tr '-' '_' | sed '/^$/d'
}

# hx_vm_build_kernel: downloads the kernel package and builds kernel/ (under lock).
hx_vm_build_kernel() {
	local c=$HX_VM_CACHE uri work deb pkg kver
	hx_need_packages qemu-system-x86 busybox-static xz-utils cpio
	uri=$(hx_vm_mirror_uri) || hx_die "no apt source for bookworm found in /etc/apt; cannot fetch the backports kernel"
	hx_log "setup: using mirror $uri for bookworm-backports (kernel only)"
	mkdir -p "$c/apt/lists/partial" "$c/apt/cache/archives/partial"
	printf 'deb %s bookworm-backports main\n' "$uri" >"$c/apt/sources.list"
	hx_vm_apt apt-get update >&2 || hx_die "apt-get update (bookworm-backports) failed"
	pkg=$(hx_vm_apt apt-cache depends linux-image-amd64 2>/dev/null |
		sed -n 's/^ *Depends: *\(linux-image-6\.12[^ ]*-amd64\)$/\1/p' | head -n1)
	[ -n "$pkg" ] || hx_die "bookworm-backports has no linux-image-amd64 depending on a 6.12 kernel"
	hx_log "setup: downloading $pkg"
	work=$(mktemp -d "$c/work.XXXXXX")
	(cd "$work" && hx_vm_apt apt-get download "$pkg" >&2) || { rm -rf "$work"; hx_die "apt-get download $pkg failed"; }
	deb=$(ls "$work"/*.deb 2>/dev/null | head -n1)
	[ -n "$deb" ] || { rm -rf "$work"; hx_die "download of $pkg produced no .deb"; }
	hx_log "setup: extracting kernel and modules"
	mkdir -p "$work/x" "$work/initrd/lib/modules" "$work/out"
	dpkg-deb -x "$deb" "$work/x" || { rm -rf "$work"; hx_die "dpkg-deb -x $deb failed"; }
	rm -f "$deb"
	kver=$(ls "$work/x/lib/modules" | head -n1)
	[ -n "$kver" ] && [ -f "$work/x/boot/vmlinuz-$kver" ] ||
		{ rm -rf "$work"; hx_die "$pkg has no vmlinuz/modules"; }
	cp "$work/x/boot/vmlinuz-$kver" "$work/out/vmlinuz"

	# Map module name -> file, then resolve dependencies (depth first, so a
	# module's dependencies come before it in the load order).
	local -A file_of=() seen=()
	local f n order=()
	while IFS= read -r f; do
		n=$(basename "$f"); n=${n%%.ko*}; n=${n//-/_}
		file_of[$n]=$f
	done < <(find "$work/x/lib/modules/$kver" -name '*.ko*')
	hx_vm_add_module() {
		local m=$1 src dst d
		[ -n "${seen[$m]:-}" ] && return 0
		seen[$m]=1
		src=${file_of[$m]:-}
		if [ -z "$src" ]; then
			grep -q "/${m//_/[-_]}\.ko" "$work/x/lib/modules/$kver/modules.builtin" 2>/dev/null ||
				hx_log "setup: note: module $m neither built in nor shipped; skipped"
			return 0
		fi
		dst=$work/initrd/lib/modules/$m.ko
		case $src in
		*.xz) xz -dc "$src" >"$dst" ;;
		*.zst) zstd -dcq "$src" >"$dst" ;;
		*.gz) gzip -dc "$src" >"$dst" ;;
		*) cp "$src" "$dst" ;;
		esac || hx_die "cannot decompress $src"
		for d in $(hx_vm_ko_depends "$dst"); do hx_vm_add_module "$d"; done
		order+=("$m")
	}
	for n in $HX_VM_MODULES; do hx_vm_add_module "$n"; done
	printf '%s\n' "${order[@]}" >"$work/initrd/lib/modules/load.list"
	hx_log "setup: modules: ${order[*]}"

	mkdir -p "$work/out/modules"
	cp "$work"/initrd/lib/modules/* "$work/out/modules/"
	printf '%s\n' "$kver" >"$work/out/VERSION"
	hx_vm_modules_sum >"$work/out/MODULES"
	rm -rf "$c/kernel.old"
	[ -d "$c/kernel" ] && mv "$c/kernel" "$c/kernel.old"
	mv "$work/out" "$c/kernel"
	rm -rf "$work" "$c/kernel.old"
	hx_log "setup: kernel $kver ready in $c/kernel"
}

# hx_vm_build_initrd: (re)builds kernel/initrd.gz from the cached modules,
# busybox and the current init script.  Called under the setup lock.
hx_vm_build_initrd() {
	local c=$HX_VM_CACHE work
	hx_log "setup: building the initramfs"
	work=$(mktemp -d "$c/initrd.XXXXXX")
	mkdir -p "$work/root/bin" "$work/root/lib/modules" "$work/root/proc" "$work/root/sys" \
		"$work/root/dev" "$work/root/res" "$work/root/newroot"
	cp "$c/kernel/modules/"* "$work/root/lib/modules/"
	cp "$(command -v busybox || echo /bin/busybox)" "$work/root/bin/busybox" || hx_die "busybox not found"
	ln -s busybox "$work/root/bin/sh"
	hx_vm_init_script >"$work/root/init"
	chmod 755 "$work/root/init"
	(cd "$work/root" && find . | cpio -o -H newc -R 0:0 --quiet | gzip -1) >"$work/initrd.gz" ||
		{ rm -rf "$work"; hx_die "building the initramfs failed"; }
	mv -f "$work/initrd.gz" "$c/kernel/initrd.gz"
	hx_vm_init_script | cksum >"$c/kernel/INIT_SUM"
	rm -rf "$work"
}

# The module list the kernel/ cache must have been built from, one word a
# line (so that a change of white space alone does not count).
hx_vm_modules_sum() {
	# shellcheck disable=SC2086 # one word a line, on purpose
	printf '%s\n' $HX_VM_MODULES | cksum
}

# A cache built from another module list (or before kernel/MODULES was
# written) is not ready: hx_vm_setup builds it again.
hx_vm_kernel_ready() {
	[ -f "$HX_VM_CACHE/kernel/VERSION" ] && [ -f "$HX_VM_CACHE/kernel/vmlinuz" ] &&
		[ -f "$HX_VM_CACHE/kernel/modules/load.list" ] &&
		[ "$(cat "$HX_VM_CACHE/kernel/MODULES" 2>/dev/null)" = "$(hx_vm_modules_sum)" ]
}

hx_vm_ready() {
	hx_vm_kernel_ready && [ -f "$HX_VM_CACHE/kernel/initrd.gz" ] &&
		[ "$(cat "$HX_VM_CACHE/kernel/INIT_SUM" 2>/dev/null)" = "$(hx_vm_init_script | cksum)" ]
}

# hx_vm_setup: makes sure $HX_VM_CACHE/kernel is complete; safe to run concurrently.
hx_vm_setup() {
	command -v qemu-system-x86_64 >/dev/null 2>&1 || hx_need_packages qemu-system-x86
	command -v qemu-system-x86_64 >/dev/null 2>&1 || hx_die "qemu-system-x86_64 is not available"
	hx_vm_ready && return 0
	mkdir -p "$HX_VM_CACHE" || hx_die "cannot create $HX_VM_CACHE"
	(
		exec 9>"$HX_VM_CACHE/setup.lock"
		flock 9 || hx_die "cannot lock $HX_VM_CACHE/setup.lock"
		hx_vm_ready && exit 0
		hx_need_packages busybox-static xz-utils cpio
		hx_vm_kernel_ready || hx_vm_build_kernel
		hx_vm_build_initrd
	) || exit 1
	hx_vm_ready || hx_die "VM setup did not complete"
}

# hx_vm_init_script: prints the guest's /init (busybox sh, runs as PID 1).
#
# Protocol with vm-run (through the "res" 9p share, a per-run directory):
#   res/env     sourced by init: HXVM_REPO=<absolute repository path>
#   res/cmd.sh  the command, run with the host's /bin/sh inside the chroot
#   res/started written by init just before the command starts
#   res/status  written by init: the command's exit status
# Output of the command goes to ttyS0 (raw); the kernel console and init's
# own messages go to ttyS1 (a log file on the host).  The file systems it
# mounts over the host's (/tmp, /run, ...) are listed in HX_VM_GUEST_OWN.
hx_vm_init_script() {
	cat <<'INIT'
#!/bin/sh
export PATH=/bin
/bin/busybox --install -s /bin
die() { echo "vm-init: $*" >&2; sync; poweroff -f; sleep 5; }
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
while read -r m; do
	[ -n "$m" ] && { insmod "/lib/modules/$m.ko" || echo "vm-init: insmod $m failed" >&2; }
done </lib/modules/load.list
o=trans=virtio,version=9p2000.L,msize=262144
mount -t 9p -o "$o,cache=none" res /res || die "cannot mount the results share"
. /res/env
R=/newroot
mount -t 9p -o "$o,ro,cache=loose" hostroot $R || die "cannot mount the host root"
mount -t proc proc $R/proc
mount -t sysfs sysfs $R/sys
mount -t devtmpfs devtmpfs $R/dev
mkdir -p $R/dev/pts $R/dev/shm
ln -sf /proc/self/fd $R/dev/fd
ln -sf /proc/self/fd/0 $R/dev/stdin
ln -sf /proc/self/fd/1 $R/dev/stdout
ln -sf /proc/self/fd/2 $R/dev/stderr
mount -t devpts -o gid=5,mode=620,ptmxmode=666 devpts $R/dev/pts
mount -t tmpfs -o mode=1777 tmpfs $R/dev/shm
mount -t tmpfs -o mode=1777 tmpfs $R/tmp
mount -t tmpfs -o mode=755 tmpfs $R/run
mkdir -p "$R$HXVM_REPO" 2>/dev/null
mount -t 9p -o "$o,cache=none" repo "$R$HXVM_REPO" || die "cannot mount the repository at $HXVM_REPO"
mkdir -p $R/run/vm-run
mount --bind /res $R/run/vm-run || die "cannot bind the results share"
i=0
while [ ! -c /dev/dri/renderD128 ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
[ -c /dev/dri/renderD128 ] || echo "vm-init: /dev/dri/renderD128 did not appear" >&2
chmod 666 /dev/dri/* 2>/dev/null
ulimit -n 65536
ulimit -l unlimited
ulimit -u unlimited
ulimit -c 0
stty -F /dev/ttyS0 raw -echo 2>/dev/null
# The kernel patches its text (a static branch) once the random generator
# is ready; under TCG with two vCPUs that patching has killed the guest
# (RIP in get_random_u32, about 6 s after boot).  vm-run gives the guest
# RDRAND and trusts it (random.trust_cpu=on), so the generator is ready
# at 0.08 s, before the second vCPU is up.  Should it not be ready here, a
# blocking read waits for it (jitter entropy) and a pause for the patch:
# a death then is still before the command started, and vm-run boots
# again.
if ! timeout 0.2 head -c 1 /dev/random >/dev/null 2>&1; then
	timeout 30 head -c 1 /dev/random >/dev/null 2>&1
	sleep 1
fi
: >/res/started
chroot $R /usr/bin/env -i /bin/sh /run/vm-run/cmd.sh </dev/null >/dev/ttyS0 2>&1
rc=$?
echo "$rc" >/res/status.tmp && mv /res/status.tmp /res/status
sync
poweroff -f
sleep 5
INIT
}
