/* The fake AMD device's kernel side: /dev/kfd and its ioctls, the fake
 * amdgpu render node, the KFD sysfs topology (redirected to a generated
 * tree), the few libdrm_amdgpu entry points ROCr 6.1 and later insist on,
 * and the KFD events the soft CP fires.
 *
 * Every KFD and render-node fd is a duplicate of one memfd, so every
 * mmap offset this fake hands out (buffer objects, doorbells, the events
 * page) is an offset into that memfd and the kernel performs the mmaps
 * natively.  Written from the KFD ioctl ABI (linux/kfd_ioctl.h). */

/* The wrappers below have the plain (not _FILE_OFFSET_BITS=64) signatures. */
#undef _FILE_OFFSET_BITS
#include "fakedev.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <linux/kfd_ioctl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

int fd_debug;
int memfd = -1;
static dev_t mem_dev;
static ino_t mem_ino;
static char topo_dir[256];
static char render_path[64];
static pthread_mutex_t mem_lock = PTHREAD_MUTEX_INITIALIZER;

void fd_log(int level, const char *fmt, ...)
{
	va_list ap;
	if (level > fd_debug)
		return;
	va_start(ap, fmt);
	fputs("fakedev: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

void fd_die(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("fakedev: FATAL: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	abort();
}

#define REAL(ret, name, ...)                                                   \
	static ret (*real_##name)(__VA_ARGS__);                                \
	if (!real_##name)                                                      \
		real_##name = (ret(*)(__VA_ARGS__))dlsym(RTLD_NEXT, #name);

/* ---------------------------------------------------------------- paths */

static const char *const sys_prefixes[] = {
	"/sys/devices/virtual/kfd/kfd",
	"/sys/class/kfd/kfd",
};

/* libhsakmt describes the CPU node's caches from
 * /sys/devices/system/node/node0/cpuN/cache (topology.c
 * topology_create_temp_cpu_cache_list) and fails the whole topology --
 * no device -- when no CPU has a cache directory, as on a kernel built
 * without cacheinfo for the machine (some virtual machines).  The fake
 * gives each online CPU of node 0 the cache topology_write made
 * (cpucache/cpuN/cache), whatever the host kernel shows.  (A kernel
 * without NUMA has no node directory; libhsakmt then reads
 * /sys/devices/system/cpu, which is not redirected.) */
static const char cpu_cache_prefix[] = "/sys/devices/system/node/node0/cpu";

static const char *redirect_cpu_cache(const char *path, char *buf, size_t n)
{
	const char *p = path + sizeof(cpu_cache_prefix) - 1, *q = p;

	while (*q >= '0' && *q <= '9')
		q++;
	if (q == p || strncmp(q, "/cache", 6) != 0 || (q[6] != '/' && q[6] != 0))
		return path;
	snprintf(buf, n, "%s/cpucache/cpu%.*s%s", topo_dir, (int)(q - p), p, q);
	fd_log(3, "redirect %s", path);
	return buf;
}

/* Returns the path to use: PATH itself or a redirected copy in BUF. */
static const char *redirect(const char *path, char *buf, size_t n)
{
	if (!path || memfd < 0)
		return path;
	if (strncmp(path, cpu_cache_prefix, sizeof(cpu_cache_prefix) - 1) == 0)
		return redirect_cpu_cache(path, buf, n);
	for (size_t i = 0; i < sizeof(sys_prefixes) / sizeof(sys_prefixes[0]); i++) {
		size_t l = strlen(sys_prefixes[i]);
		if (strncmp(path, sys_prefixes[i], l) == 0 && (path[l] == '/' || path[l] == 0)) {
			snprintf(buf, n, "%s%s", topo_dir, path + l);
			fd_log(3, "redirect %s", path);
			return buf;
		}
	}
	return path;
}

/* 1: /dev/kfd, 2: the fake render node, 0: neither. */
static int fake_node(const char *path)
{
	if (!path || memfd < 0)
		return 0;
	if (strcmp(path, "/dev/kfd") == 0)
		return 1;
	if (strcmp(path, render_path) == 0)
		return 2;
	return 0;
}

static int open_fake(int which, int flags)
{
	int fd = fcntl(memfd, (flags & O_CLOEXEC) ? F_DUPFD_CLOEXEC : F_DUPFD, 3);
	fd_log(2, "open %s -> %d", which == 1 ? "/dev/kfd" : render_path, fd);
	return fd;
}

bool fd_is_fake(int fd)
{
	struct stat st;
	if (memfd < 0 || fd < 0 || fstat(fd, &st) != 0)
		return false;
	return st.st_ino == mem_ino && st.st_dev == mem_dev;
}

#define OPEN_MODE(flags, mode)                                                 \
	do {                                                                   \
		if ((flags) & (O_CREAT | __O_TMPFILE)) {                       \
			va_list ap;                                            \
			va_start(ap, flags);                                   \
			mode = va_arg(ap, int);                                \
			va_end(ap);                                            \
		}                                                              \
	} while (0)

int open(const char *path, int flags, ...)
{
	REAL(int, open, const char *, int, ...);
	char buf[512];
	int mode = 0, w;
	OPEN_MODE(flags, mode);
	if ((w = fake_node(path)))
		return open_fake(w, flags);
	return real_open(redirect(path, buf, sizeof(buf)), flags, mode);
}

int open64(const char *path, int flags, ...)
{
	REAL(int, open64, const char *, int, ...);
	char buf[512];
	int mode = 0, w;
	OPEN_MODE(flags, mode);
	if ((w = fake_node(path)))
		return open_fake(w, flags);
	return real_open64(redirect(path, buf, sizeof(buf)), flags, mode);
}

int __open_2(const char *path, int flags)
{
	return open(path, flags);
}

int __open64_2(const char *path, int flags)
{
	return open64(path, flags);
}

int openat(int dirfd, const char *path, int flags, ...)
{
	REAL(int, openat, int, const char *, int, ...);
	char buf[512];
	int mode = 0, w;
	OPEN_MODE(flags, mode);
	if ((w = fake_node(path)))
		return open_fake(w, flags);
	return real_openat(dirfd, redirect(path, buf, sizeof(buf)), flags, mode);
}

int openat64(int dirfd, const char *path, int flags, ...)
{
	REAL(int, openat64, int, const char *, int, ...);
	char buf[512];
	int mode = 0, w;
	OPEN_MODE(flags, mode);
	if ((w = fake_node(path)))
		return open_fake(w, flags);
	return real_openat64(dirfd, redirect(path, buf, sizeof(buf)), flags, mode);
}

FILE *fopen(const char *path, const char *m)
{
	REAL(FILE *, fopen, const char *, const char *);
	char buf[512];
	return real_fopen(redirect(path, buf, sizeof(buf)), m);
}

FILE *fopen64(const char *path, const char *m)
{
	REAL(FILE *, fopen64, const char *, const char *);
	char buf[512];
	return real_fopen64(redirect(path, buf, sizeof(buf)), m);
}

DIR *opendir(const char *path)
{
	REAL(DIR *, opendir, const char *);
	char buf[512];
	return real_opendir(redirect(path, buf, sizeof(buf)));
}

int access(const char *path, int m)
{
	REAL(int, access, const char *, int);
	char buf[512];
	if (fake_node(path))
		return 0;
	return real_access(redirect(path, buf, sizeof(buf)), m);
}

int stat(const char *path, struct stat *st)
{
	REAL(int, stat, const char *, struct stat *);
	char buf[512];
	if (fake_node(path))
		return fstat(memfd, st);
	return real_stat(redirect(path, buf, sizeof(buf)), st);
}

int stat64(const char *path, struct stat64 *st)
{
	REAL(int, stat64, const char *, struct stat64 *);
	char buf[512];
	if (fake_node(path))
		return fstat64(memfd, st);
	return real_stat64(redirect(path, buf, sizeof(buf)), st);
}

ssize_t readlink(const char *path, char *out, size_t n)
{
	REAL(ssize_t, readlink, const char *, char *, size_t);
	char buf[512];
	return real_readlink(redirect(path, buf, sizeof(buf)), out, n);
}

/* VRAM the host cannot see is mapped PROT_NONE by libhsakmt; ROCr 6.x's
 * code-object loader nevertheless writes some device segments with the
 * CPU (HIP 6.4.3 on the fake device faulted there).  The fake behaves as
 * a board with all VRAM host-visible (a large BAR): its memory is mapped
 * readable and writable whatever the protection asked for. */
void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	REAL(void *, mmap, void *, size_t, int, int, int, off_t);
	if (prot == PROT_NONE && fd >= 0 && fd_is_fake(fd))
		prot = PROT_READ | PROT_WRITE;
	return real_mmap(addr, len, prot, flags, fd, off);
}

void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	return mmap(addr, len, prot, flags, fd, off);
}

/* --------------------------------------------------------------- memory */

#define MEMFD_SIZE (1ULL << 40)
/* 8 KiB of 64-bit doorbells at offset 0: libhsakmt takes the queue's
 * doorbell as (doorbell_offset modulo its doorbell aperture size). */
#define DOORBELL_OFF 0ULL
#define MMIO_OFF 0x20000ULL       /* the HDP flush page */
#define EVENTS_OFF 0x30000ULL     /* KFD_SIGNAL_EVENT_LIMIT * 8 = 32 KiB */
#define HEAP_OFF 0x100000ULL

struct bo {
	uint64_t handle, va, size, off, cpu;
	uint32_t flags;
	bool used;
};
static struct bo *bos;
static size_t nbos, capbos;
static uint64_t heap_next = HEAP_OFF;

static struct bo *bo_find(uint64_t handle)
{
	for (size_t i = 0; i < nbos; i++)
		if (bos[i].used && bos[i].handle == handle)
			return &bos[i];
	return NULL;
}

/* The soft CP's view of every BO: the whole memfd mapped once.  It must
 * not use the BO's own address, which libhsakmt keeps PROT_NONE for VRAM
 * the host cannot see. */
static uint8_t *cp_view;

void *fd_xlate(uint64_t va)
{
	void *r = (void *)(uintptr_t)va;
	pthread_mutex_lock(&mem_lock);
	for (size_t i = 0; i < nbos; i++) {
		struct bo *b = &bos[i];
		if (!b->used || va < b->va || va >= b->va + b->size)
			continue;
		if (b->flags & KFD_IOC_ALLOC_MEM_FLAGS_USERPTR)
			r = (void *)(uintptr_t)(b->cpu + (va - b->va));
		else
			r = cp_view + b->off + (va - b->va);
		break;
	}
	pthread_mutex_unlock(&mem_lock);
	return r;
}

const char *fd_mem_state(uint64_t va)
{
	const char *r = "no buffer";
	pthread_mutex_lock(&mem_lock);
	for (size_t i = 0; i < nbos; i++) {
		const struct bo *b = &bos[i];
		if (va < b->va || va >= b->va + b->size)
			continue;
		r = b->used ? "a live buffer" : "a freed buffer";
		if (b->used)
			break;
	}
	pthread_mutex_unlock(&mem_lock);
	return r;
}

static int kfd_alloc(struct kfd_ioctl_alloc_memory_of_gpu_args *a)
{
	struct bo b = { 0 };
	b.va = a->va_addr;
	b.size = a->size;
	b.flags = a->flags;
	pthread_mutex_lock(&mem_lock);
	if (nbos == capbos) {
		capbos = capbos ? capbos * 2 : 256;
		bos = realloc(bos, capbos * sizeof(*bos));
		if (!bos)
			fd_die("out of memory");
	}
	b.handle = ((uint64_t)fd_gpu_id << 32) | (uint32_t)(nbos + 1);
	if (a->flags & KFD_IOC_ALLOC_MEM_FLAGS_USERPTR) {
		b.cpu = a->mmap_offset;
	} else if (a->flags & KFD_IOC_ALLOC_MEM_FLAGS_DOORBELL) {
		b.off = DOORBELL_OFF;
	} else if (a->flags & KFD_IOC_ALLOC_MEM_FLAGS_MMIO_REMAP) {
		b.off = MMIO_OFF;
	} else {
		uint64_t sz = (a->size + 0xfff) & ~0xfffULL;
		b.off = heap_next;
		heap_next += sz + 0x1000;
		if (heap_next > MEMFD_SIZE)
			fd_die("the fake's memory (1 TiB) is used up");
	}
	if (!(a->flags & KFD_IOC_ALLOC_MEM_FLAGS_USERPTR))
		a->mmap_offset = b.off;
	b.used = true;
	bos[nbos++] = b;
	a->handle = b.handle;
	pthread_mutex_unlock(&mem_lock);
	fd_log(3, "alloc va=%#llx size=%#llx flags=%#x off=%#llx", (unsigned long long)b.va,
	       (unsigned long long)b.size, b.flags, (unsigned long long)b.off);
	return 0;
}

static int kfd_free(uint64_t handle)
{
	pthread_mutex_lock(&mem_lock);
	struct bo *b = bo_find(handle);
	if (!b) {
		pthread_mutex_unlock(&mem_lock);
		errno = EINVAL;
		return -1;
	}
	if (b->off >= HEAP_OFF)
		fallocate(memfd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)b->off,
			  (off_t)((b->size + 0xfff) & ~0xfffULL));
	b->used = false;
	pthread_mutex_unlock(&mem_lock);
	return 0;
}

/* --------------------------------------------------------------- events */

struct event {
	uint32_t id, type;
	bool auto_reset, signaled, used;
	uint64_t age;
	unsigned waiters;
};
#define MAX_EVENTS 8192
static struct event events[MAX_EVENTS];
static uint32_t next_event_id = 1;
static pthread_mutex_t ev_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t ev_cond;

static struct event *ev_get(uint32_t id)
{
	if (id == 0 || id >= MAX_EVENTS || !events[id].used)
		return NULL;
	return &events[id];
}

/* KFD's set_event: waiters present are all woken and an auto-reset event
 * does not stay signalled; with none, it stays signalled for the next. */
static void ev_set_locked(struct event *e)
{
	e->age++;
	e->signaled = !e->auto_reset || e->waiters == 0;
	if (e->waiters)
		pthread_cond_broadcast(&ev_cond); /* they see the age move */
}

/* The signal page: one 64-bit slot per signal event, indexed by event id,
 * where the GPU writes before it interrupts (a completion signal's
 * event_mailbox_ptr is its event's slot).  KFD fills it with
 * UNSIGNALED_EVENT_SLOT when it takes the page (kfd_events.c
 * kfd_event_page_set, allocate_signal_page) and again in an event's slot
 * when the event is created (allocate_event_notification_slot).  On a
 * dGPU libhsakmt allocates the page itself and hands its buffer's handle
 * to the first CREATE_EVENT; otherwise it maps KFD's (EVENTS_OFF here). */
#define UNSIGNALED_SLOT (~0ULL)
static uint64_t *ev_slots;
static uint64_t ev_page_va, ev_page_size;

static void ev_page_take(uint64_t handle)
{
	uint64_t off = EVENTS_OFF, va = 0;
	pthread_mutex_lock(&mem_lock);
	for (size_t i = 0; handle && i < nbos; i++)
		if (bos[i].used && bos[i].handle == handle && !(bos[i].flags & KFD_IOC_ALLOC_MEM_FLAGS_USERPTR)) {
			off = bos[i].off;
			va = bos[i].va;
		}
	pthread_mutex_unlock(&mem_lock);
	if (handle && !va)
		fd_die("CREATE_EVENT names event page buffer %#llx, which the fake did not allocate",
		       (unsigned long long)handle);
	ev_slots = (uint64_t *)(cp_view + off);
	ev_page_va = va;
	ev_page_size = KFD_SIGNAL_EVENT_LIMIT * 8;
	for (unsigned i = 0; i < KFD_SIGNAL_EVENT_LIMIT; i++)
		__atomic_store_n(&ev_slots[i], UNSIGNALED_SLOT, __ATOMIC_RELAXED);
}

void *fd_event_slot(uint64_t mailbox)
{
	if (!ev_slots)
		return NULL;
	if (ev_page_va) {
		if (mailbox < ev_page_va || mailbox - ev_page_va >= ev_page_size || mailbox % 8)
			return NULL;
		return (uint8_t *)ev_slots + (mailbox - ev_page_va);
	}
	/* KFD's own page, mapped by libhsakmt at an address the fake does
	 * not track: the mailbox is translated like any other address. */
	uint8_t *p = fd_xlate(mailbox);
	if (p < (uint8_t *)ev_slots || p >= (uint8_t *)ev_slots + KFD_SIGNAL_EVENT_LIMIT * 8)
		return NULL;
	return p;
}

static bool gpu_signalable(const struct event *e)
{
	return e->type == KFD_IOC_EVENT_SIGNAL || e->type == KFD_IOC_EVENT_DEBUG_EVENT;
}

/* set_event_from_interrupt: the slot is acknowledged (made unsignalled
 * again) and the event set. */
static void ev_from_interrupt_locked(struct event *e)
{
	if (!e || !gpu_signalable(e))
		return;
	__atomic_store_n(&ev_slots[e->id], UNSIGNALED_SLOT, __ATOMIC_SEQ_CST);
	ev_set_locked(e);
}

/* The soft CP's end-of-pipe interrupt, whose context id is the event id
 * the CP read from the completion signal; KFD's kfd_signal_event_interrupt
 * (kfd_events.c).  The id is trusted only if it names a live event whose
 * slot is signalled (lookup_signaled_event_by_partial_id); otherwise KFD
 * takes the id for bogus and sets every event whose slot is signalled.
 * Event id 0 is never an event (kfd_event_init_process reserves it "to
 * ignore bogus events that are sent by the CP without a context ID"), and
 * an id whose event was destroyed finds nothing: neither is an error. */
void fd_event_interrupt(uint32_t id)
{
	pthread_mutex_lock(&ev_lock);
	struct event *e = NULL;
	if (ev_slots && id < KFD_SIGNAL_EVENT_LIMIT &&
	    __atomic_load_n(&ev_slots[id], __ATOMIC_SEQ_CST) != UNSIGNALED_SLOT)
		e = ev_get(id);
	if (e) {
		ev_from_interrupt_locked(e);
	} else if (ev_slots) {
		unsigned n = 0;
		for (uint32_t i = 1; i < KFD_SIGNAL_EVENT_LIMIT; i++)
			if (events[i].used && gpu_signalable(&events[i]) &&
			    __atomic_load_n(&ev_slots[i], __ATOMIC_SEQ_CST) != UNSIGNALED_SLOT) {
				ev_from_interrupt_locked(&events[i]);
				n++;
			}
		fd_log(1, "interrupt for event id %u, which names no signalled event: "
		       "%u signalled slot(s) found by scanning, as KFD does", id, n);
	}
	pthread_mutex_unlock(&ev_lock);
}

static int kfd_create_event(struct kfd_ioctl_create_event_args *a)
{
	bool signal = a->event_type == KFD_IOC_EVENT_SIGNAL || a->event_type == KFD_IOC_EVENT_DEBUG_EVENT;
	pthread_mutex_lock(&ev_lock);
	if (!ev_slots && (signal || a->event_page_offset))
		ev_page_take(a->event_page_offset); /* kfd_ioctl_create_event */
	uint32_t id = next_event_id;
	while (id < MAX_EVENTS && events[id].used)
		id++;
	if (id >= MAX_EVENTS) {
		for (id = 1; id < MAX_EVENTS && events[id].used; id++)
			;
		if (id >= MAX_EVENTS)
			fd_die("more than %d KFD events", MAX_EVENTS);
	}
	if (signal && id >= KFD_SIGNAL_EVENT_LIMIT) {
		/* A signal event needs a slot: KFD's create_signal_event
		 * refuses with ENOSPC once the page is full. */
		for (id = 1; id < KFD_SIGNAL_EVENT_LIMIT && events[id].used; id++)
			;
		if (id >= KFD_SIGNAL_EVENT_LIMIT) {
			pthread_mutex_unlock(&ev_lock);
			errno = ENOSPC;
			return -1;
		}
	}
	next_event_id = id + 1;
	events[id] = (struct event){ .id = id, .type = a->event_type,
				     .auto_reset = a->auto_reset != 0, .used = true, .age = 1 };
	if (signal)
		__atomic_store_n(&ev_slots[id], UNSIGNALED_SLOT, __ATOMIC_SEQ_CST);
	pthread_mutex_unlock(&ev_lock);
	a->event_id = id;
	a->event_trigger_data = id;
	a->event_slot_index = id;
	/* libhsakmt gives signal events a mailbox only when this is set. */
	a->event_page_offset = EVENTS_OFF;
	fd_log(3, "create event %u type %u auto %u", id, a->event_type, a->auto_reset);
	return 0;
}

static int kfd_wait_events(struct kfd_ioctl_wait_events_args *a)
{
	struct kfd_event_data *d = (void *)(uintptr_t)a->events_ptr;
	uint32_t n = a->num_events;
	struct timespec dl;
	bool infinite = a->timeout == 0xffffffffu;
	bool use_age = fd_kfd_minor >= 14;
	uint64_t *seen;

	/* No limit of the fake's own: ROCr's async-events thread waits on
	 * every signal with an interrupt at once, and that list grows with
	 * the process's streams and events (65 in a workload program on
	 * 5.2.3); the kernel allocates its waiters per call too. */
	seen = malloc((n ? n : 1) * sizeof(*seen));
	if (!seen) {
		errno = ENOMEM;
		return -1;
	}
	clock_gettime(CLOCK_MONOTONIC, &dl);
	dl.tv_sec += a->timeout / 1000;
	dl.tv_nsec += (long)(a->timeout % 1000) * 1000000L;
	if (dl.tv_nsec >= 1000000000L) {
		dl.tv_sec++;
		dl.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&ev_lock);
	for (uint32_t i = 0; i < n; i++) {
		struct event *e = ev_get(d[i].event_id);
		if (!e) {
			/* undo the waiter counts taken so far */
			for (uint32_t j = 0; j < i; j++) {
				struct event *f = ev_get(d[j].event_id);
				if (f)
					f->waiters--;
			}
			pthread_mutex_unlock(&ev_lock);
			free(seen);
			errno = EINVAL;
			return -1;
		}
		seen[i] = e->age;
		/* ROCr's event age (KFD 1.14): an age the caller has not
		 * seen yet counts as a signal. */
		if (use_age && e->type == KFD_IOC_EVENT_SIGNAL) {
			uint64_t last = *(uint64_t *)&d[i];
			if (last && last != e->age)
				seen[i] = last;
		}
		e->waiters++;
	}
	int result = KFD_IOC_WAIT_RESULT_TIMEOUT;
	for (;;) {
		uint32_t done = 0;
		for (uint32_t i = 0; i < n; i++) {
			struct event *e = ev_get(d[i].event_id);
			if (e && (e->signaled || e->age != seen[i]))
				done++;
		}
		if (done && (!a->wait_for_all || done == n)) {
			result = KFD_IOC_WAIT_RESULT_COMPLETE;
			break;
		}
		if (a->timeout == 0)
			break;
		if (infinite)
			pthread_cond_wait(&ev_cond, &ev_lock);
		else if (pthread_cond_timedwait(&ev_cond, &ev_lock, &dl) == ETIMEDOUT)
			break;
	}
	for (uint32_t i = 0; i < n; i++) {
		struct event *e = ev_get(d[i].event_id);
		if (!e)
			continue;
		e->waiters--;
		if (result == KFD_IOC_WAIT_RESULT_COMPLETE && e->auto_reset &&
		    (e->signaled || e->age != seen[i]))
			e->signaled = false;
		if (use_age && e->type == KFD_IOC_EVENT_SIGNAL)
			*(uint64_t *)&d[i] = e->age;
	}
	pthread_mutex_unlock(&ev_lock);
	free(seen);
	a->wait_result = result;
	return 0;
}

/* ---------------------------------------------------------------- ioctl */

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static uint32_t next_queue_id;

static int kfd_ioctl(unsigned long req, void *arg)
{
	unsigned nr = _IOC_NR(req);
	fd_log(3, "kfd ioctl %#x", nr);
	switch (nr) {
	case 0x01: {
		struct kfd_ioctl_get_version_args *a = arg;
		a->major_version = 1;
		a->minor_version = fd_kfd_minor;
		return 0;
	}
	case 0x02: {
		struct kfd_ioctl_create_queue_args *a = arg;
		uint32_t id = __atomic_fetch_add(&next_queue_id, 1, __ATOMIC_SEQ_CST);
		if (id >= 1024)
			fd_die("more than 1024 queues");
		a->queue_id = id;
		a->doorbell_offset = DOORBELL_OFF + (uint64_t)id * 8;
		fd_log(2, "create queue %u type %u ring %#llx size %u", id, a->queue_type,
		       (unsigned long long)a->ring_base_address, a->ring_size);
		fd_cp_add_queue(id, (int)a->queue_type, fd_xlate(a->ring_base_address), a->ring_size,
				fd_xlate(a->write_pointer_address), fd_xlate(a->read_pointer_address));
		return 0;
	}
	case 0x03: {
		struct kfd_ioctl_destroy_queue_args *a = arg;
		fd_cp_remove_queue(a->queue_id);
		return 0;
	}
	case 0x04: /* SET_MEMORY_POLICY */
	case 0x07: /* UPDATE_QUEUE */
	case 0x11: /* SET_SCRATCH_BACKING_VA */
	case 0x13: /* SET_TRAP_HANDLER */
	case 0x15: /* ACQUIRE_VM */
	case 0x1A: /* SET_CU_MASK */
		return 0;
	case 0x05: {
		struct kfd_ioctl_get_clock_counters_args *a = arg;
		uint64_t t = now_ns();
		a->gpu_clock_counter = t;
		a->cpu_clock_counter = t;
		a->system_clock_counter = t;
		a->system_clock_freq = 1000000000ULL;
		return 0;
	}
	case 0x08:
		return kfd_create_event(arg);
	case 0x09: {
		struct kfd_ioctl_destroy_event_args *a = arg;
		pthread_mutex_lock(&ev_lock);
		struct event *e = ev_get(a->event_id);
		if (e)
			e->used = false;
		pthread_mutex_unlock(&ev_lock);
		return 0;
	}
	case 0x0A: {
		struct kfd_ioctl_set_event_args *a = arg;
		pthread_mutex_lock(&ev_lock);
		struct event *e = ev_get(a->event_id);
		if (e)
			ev_set_locked(e);
		pthread_mutex_unlock(&ev_lock);
		if (!e) {
			errno = EINVAL;
			return -1;
		}
		return 0;
	}
	case 0x0B: {
		struct kfd_ioctl_reset_event_args *a = arg;
		pthread_mutex_lock(&ev_lock);
		struct event *e = ev_get(a->event_id);
		if (e)
			e->signaled = false;
		pthread_mutex_unlock(&ev_lock);
		return 0;
	}
	case 0x0C:
		return kfd_wait_events(arg);
	case 0x12: {
		struct kfd_ioctl_get_tile_config_args *a = arg;
		a->num_tile_configs = 0;
		a->num_macro_tile_configs = 0;
		a->gb_addr_config = 0;
		a->num_banks = 0;
		a->num_ranks = 0;
		return 0;
	}
	case 0x14: {
		struct kfd_ioctl_get_process_apertures_new_args *a = arg;
		struct kfd_process_device_apertures *ap = (void *)(uintptr_t)a->kfd_process_device_apertures_ptr;
		if (a->num_of_nodes < 1) {
			errno = EINVAL;
			return -1;
		}
		memset(ap, 0, sizeof(*ap));
		ap->lds_base = 1ULL << 48;
		ap->lds_limit = (1ULL << 48) | 0xffffffffULL;
		ap->scratch_base = 2ULL << 48;
		ap->scratch_limit = (2ULL << 48) | 0xffffffffULL;
		ap->gpuvm_base = 0x1000000ULL;
		ap->gpuvm_limit = 0x7fffffffffffULL;
		ap->gpu_id = fd_gpu_id;
		a->num_of_nodes = 1;
		return 0;
	}
	case 0x16:
		return kfd_alloc(arg);
	case 0x17:
		return kfd_free(((struct kfd_ioctl_free_memory_of_gpu_args *)arg)->handle);
	case 0x18: {
		struct kfd_ioctl_map_memory_to_gpu_args *a = arg;
		a->n_success = a->n_devices;
		return 0;
	}
	case 0x19: {
		struct kfd_ioctl_unmap_memory_from_gpu_args *a = arg;
		a->n_success = a->n_devices;
		return 0;
	}
	case 0x23: {
		struct kfd_ioctl_get_available_memory_args *a = arg;
		a->available = 6ULL << 30;
		return 0;
	}
	case 0x21: /* SET_XNACK_MODE: refused as by a kernel without it */
	case 0x1F: /* SMI_EVENTS */
	case 0x20: /* SVM: the topology does not offer it */
	case 0x82: /* DBG_TRAP */
		fd_log(2, "kfd ioctl %#x refused (EINVAL)", nr);
		errno = EINVAL;
		return -1;
	default:
		fd_die("KFD ioctl %#x (size %u) is not emulated", nr, (unsigned)_IOC_SIZE(req));
	}
}

int ioctl(int fd, unsigned long req, ...)
{
	REAL(int, ioctl, int, unsigned long, ...);
	va_list ap;
	va_start(ap, req);
	void *arg = va_arg(ap, void *);
	va_end(ap);
	if (memfd >= 0 && (_IOC_TYPE(req) == 'K' || _IOC_TYPE(req) == 'd') && fd_is_fake(fd)) {
		if (_IOC_TYPE(req) == 'K')
			return kfd_ioctl(req, arg);
		/* DRM ioctls on the fake render node: none is emulated; libdrm's
		 * authentication probe (GET_CLIENT) fails harmlessly. */
		fd_log(2, "drm ioctl %#lx on the fake node refused", req);
		errno = EINVAL;
		return -1;
	}
	return real_ioctl(fd, req, arg);
}

/* ------------------------------------------------- HSA symbol names */

/* clr finds its blit kernels by name through ROCr's executable API; the
 * soft CP recognises a dispatch by the kernel object handed out here. */
#include <hsa/hsa.h>
hsa_status_t hsa_executable_symbol_get_info(hsa_executable_symbol_t sym,
					    hsa_executable_symbol_info_t attr, void *value)
{
	REAL(hsa_status_t, hsa_executable_symbol_get_info, hsa_executable_symbol_t,
	     hsa_executable_symbol_info_t, void *);
	hsa_status_t st = real_hsa_executable_symbol_get_info(sym, attr, value);
	if (st == HSA_STATUS_SUCCESS && attr == HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_OBJECT) {
		uint32_t len = 0;
		char name[256];
		if (real_hsa_executable_symbol_get_info(sym, HSA_EXECUTABLE_SYMBOL_INFO_NAME_LENGTH, &len) ==
			    HSA_STATUS_SUCCESS && len < sizeof(name) &&
		    real_hsa_executable_symbol_get_info(sym, HSA_EXECUTABLE_SYMBOL_INFO_NAME, name) ==
			    HSA_STATUS_SUCCESS) {
			name[len] = 0;
			char *dot = strstr(name, ".kd");
			if (dot && dot[3] == 0)
				*dot = 0;
			fd_kernel_name(*(uint64_t *)value, name);
		}
	}
	return st;
}

/* ----------------------------------------------------------------- init */

static int rm_cb(const char *p, const struct stat *s, int f, struct FTW *w)
{
	(void)s; (void)f; (void)w;
	return remove(p);
}

static void fd_cleanup(void)
{
	if (topo_dir[0])
		nftw(topo_dir, rm_cb, 16, FTW_DEPTH | FTW_PHYS);
}

static unsigned env_uint(const char *name, unsigned def)
{
	const char *v = getenv(name);
	return v && *v ? (unsigned)strtoul(v, NULL, 0) : def;
}

__attribute__((constructor)) static void fd_init(void)
{
	pthread_condattr_t ca;
	struct stat st;
	const char *tmp = getenv("TMPDIR");

	fd_debug = (int)env_uint("FAKEDEV_DEBUG", 0);
	fd_kfd_minor = env_uint("FAKEDEV_KFD_MINOR", 14);
	fd_render_minor = env_uint("FAKEDEV_RENDER_MINOR", 200);
	snprintf(render_path, sizeof(render_path), "/dev/dri/renderD%u", fd_render_minor);

	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&ev_cond, &ca);

	snprintf(topo_dir, sizeof(topo_dir), "%s/fakedev-topo.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(topo_dir))
		fd_die("cannot make the topology directory %s (%s): set TMPDIR to a writable directory",
		       topo_dir, strerror(errno));
	if (fd_topology_write(topo_dir) != 0)
		fd_die("cannot write the topology into %s", topo_dir);
	atexit(fd_cleanup);

	memfd = memfd_create("fakedev", MFD_CLOEXEC);
	if (memfd < 0 || ftruncate(memfd, (off_t)MEMFD_SIZE) != 0 || fstat(memfd, &st) != 0)
		fd_die("memfd: %s", strerror(errno));
	cp_view = mmap(NULL, MEMFD_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, memfd, 0);
	if (cp_view == MAP_FAILED)
		fd_die("cannot map the fake's memory: %s", strerror(errno));
	mem_dev = st.st_dev;
	mem_ino = st.st_ino;
	fd_log(1, "%s (gfx_target_version %u), gpu_id %u, KFD 1.%u, render node %s, topology %s",
	       fd_tgt->name, fd_tgt->gfx_target_version, fd_gpu_id, fd_kfd_minor, render_path, topo_dir);
}
