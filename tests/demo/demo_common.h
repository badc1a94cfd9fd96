/* SPDX-License-Identifier: MIT */
/* What the two demo processes share: the socket protocol. */
#ifndef DEMO_COMMON_H
#define DEMO_COMMON_H

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>

/* The producer sends three descriptors in one message: the binary syncobj
 * (HIP -> producer: "frame consumed"), the timeline syncobj (producer ->
 * HIP: odd points "frame ready"; HIP -> producer: even points "done"), and
 * a shared memory page holding the frame. */
struct demo_frame {
	volatile uint64_t produced; /* written by the producer before 2r-1 */
	volatile uint64_t consumed; /* written by HIP's stream before its signals */
};

static inline int demo_send_fds(int sock, const int *fds, int n, uint32_t rounds)
{
	struct iovec iov = { &rounds, sizeof(rounds) };
	char cbuf[CMSG_SPACE(sizeof(int) * 3)];
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
			      .msg_controllen = CMSG_SPACE(sizeof(int) * (size_t)n) };
	struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int) * (size_t)n);
	memcpy(CMSG_DATA(c), fds, sizeof(int) * (size_t)n);
	return sendmsg(sock, &msg, 0) == (ssize_t)sizeof(rounds) ? 0 : -errno;
}

static inline int demo_recv_fds(int sock, int *fds, int n, uint32_t *rounds)
{
	struct iovec iov = { rounds, sizeof(*rounds) };
	char cbuf[CMSG_SPACE(sizeof(int) * 3)];
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
			      .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *c;
	if (recvmsg(sock, &msg, MSG_CMSG_CLOEXEC) != (ssize_t)sizeof(*rounds))
		return -EIO;
	c = CMSG_FIRSTHDR(&msg);
	if (!c || c->cmsg_type != SCM_RIGHTS || c->cmsg_len != CMSG_LEN(sizeof(int) * (size_t)n))
		return -EPROTO;
	memcpy(fds, CMSG_DATA(c), sizeof(int) * (size_t)n);
	return 0;
}

#endif
