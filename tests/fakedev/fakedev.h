/* A fake AMD GPU for tests: the kernel interfaces AMD's real HIP stack
 * (clr, ROCr, libhsakmt) needs, emulated in-process by an LD_PRELOAD
 * library, and a soft command processor that executes what the runtime
 * puts on its AQL queues.  See tests/fakedev/README.md. */
#ifndef FAKEDEV_H
#define FAKEDEV_H

#include <stdint.h>
#include <stddef.h>
#include <stdbool.h>

/* Fatal: the fake met something it does not emulate.  Never a no-op. */
void fd_die(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));
void fd_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
extern int fd_debug;

/* Device identity, chosen from FAKEDEV_TARGET (topology.c). */
struct fd_target {
	const char *name;          /* gfx900, gfx1030 */
	unsigned gfx_target_version;
	unsigned device_id;
	unsigned family_id;        /* amdgpu_gpu_info.family_id */
	unsigned simd_per_cu, cu_per_simd_array, array_count;
	unsigned wave_front_size, max_waves_per_simd;
};
extern const struct fd_target *fd_tgt;
extern unsigned fd_gpu_id, fd_render_minor, fd_kfd_minor, fd_location_id;

/* topology.c: writes the KFD sysfs tree into DIR. */
int fd_topology_write(const char *dir);

/* Memory: GPU VA -> CPU address (only user pointers differ); what VA lies
 * in ("a live buffer", "a freed buffer", "no buffer": for messages). */
void *fd_xlate(uint64_t va);
const char *fd_mem_state(uint64_t va);

/* KFD events (fakedev.c): the soft CP's interrupt, and the CPU address
 * of the signal-page slot a completion signal's mailbox names (NULL if it
 * names none). */
void fd_event_interrupt(uint32_t event_id);
void *fd_event_slot(uint64_t mailbox);
bool fd_is_fake(int fd);

/* Soft CP (cp.c). */
void fd_cp_add_queue(uint32_t id, int type, void *ring, uint32_t ring_size,
		     volatile uint64_t *wptr, volatile uint64_t *rptr);
void fd_cp_remove_queue(uint32_t id);
void fd_kernel_name(uint64_t kernel_object, const char *name);

#endif
