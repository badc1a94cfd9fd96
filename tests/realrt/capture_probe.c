/* What a real HIP runtime does with hipStreamWaitValue64 and
 * hipStreamWriteValue64 on a stream being captured (Relaxed mode), run
 * through tests/realrt/with-device: whether each call is refused, whether
 * it runs on the stream at once or is recorded, and what the capture's
 * graph holds.  One line, PROBE|version|..., which tests/cpuhip plays per
 * release (cpuhip.c, submit_common; docs/testing.md).  A wait that went to
 * the stream for real is released before the stream is synchronized; an
 * alarm ends a run that would hang. */
#include <hip/hip_runtime_api.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(void)
{
	const char *ver = getenv("HX_RT_VERSION");
	hipStream_t s;
	hipGraph_t g = NULL;
	uint64_t *m = NULL;
	hipStreamCaptureStatus cs = hipStreamCaptureStatusNone;
	hipError_t e_begin, e_wait, e_write, e_is, e_end, e_sync;
	uint64_t during, after;
	size_t nodes = 0;

	alarm(60);
	if (hipStreamCreate(&s) != hipSuccess || hipHostMalloc((void **)&m, 64, 0) != hipSuccess) {
		fprintf(stderr, "capture_probe: no stream or no host memory\n");
		return 1;
	}
	m[0] = 0;
	m[1] = 0;
	e_begin = hipStreamBeginCapture(s, hipStreamCaptureModeRelaxed);
	e_wait = hipStreamWaitValue64(s, &m[0], 1, hipStreamWaitValueGte, ~0ULL);
	e_write = hipStreamWriteValue64(s, &m[1], 7, 0);
	usleep(300000);
	during = __atomic_load_n(&m[1], __ATOMIC_ACQUIRE);
	e_is = hipStreamIsCapturing(s, &cs);
	e_end = hipStreamEndCapture(s, &g);
	if (g && hipGraphGetNodes(g, NULL, &nodes) != hipSuccess)
		nodes = (size_t)-1;
	__atomic_store_n(&m[0], 1, __ATOMIC_RELEASE); /* releases a wait that went to the stream */
	e_sync = hipStreamSynchronize(s);
	after = __atomic_load_n(&m[1], __ATOMIC_ACQUIRE);
	printf("PROBE|%s|begin=%d|wait=%d|write=%d|written_during_capture=%llu|capture_status=%d"
	       "(%d)|end=%d|graph=%s|nodes=%zd|sync=%d|written_after=%llu\n",
	       ver ? ver : "?", (int)e_begin, (int)e_wait, (int)e_write, (unsigned long long)during,
	       (int)cs, (int)e_is, (int)e_end, g ? "yes" : "no", (ssize_t)nodes, (int)e_sync,
	       (unsigned long long)after);
	return 0;
}
