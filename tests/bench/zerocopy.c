/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Benchmark (not a test), issue #27: does MSG_ZEROCOPY pay for NVMe/TCP's
 * large H2C sends here?  Sends 128 KiB buffers over TCP to a receiver in
 * the same process for SECONDS, plainly or with MSG_ZEROCOPY, and prints
 * the throughput and how many zero-copy sends the kernel says it copied
 * after all (SO_EE_CODE_ZEROCOPY_COPIED: it does for a local receiver).
 * A buffer is sent again only once the kernel has reported its sends
 * done, as the transport would have to before reusing a request's data.
 *
 *   zerocopy ADDR copy|zc [SECONDS]
 */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/errqueue.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define CHUNK (128 * 1024)
#define NR_BUFS 16
#define PORT 5999

static unsigned long notified, copied;

static void *drain(void *arg)
{
	static char buf[1 << 20];
	int fd = accept(*(int *)arg, NULL, NULL);

	while (fd >= 0 && recv(fd, buf, sizeof(buf), 0) > 0)
		;
	if (fd >= 0)
		close(fd);
	return NULL;
}

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Takes the zero-copy completions the error queue holds; @wait: first
 * wait up to 100 ms for one. */
static void reap(int fd, bool wait)
{
	for (;;) {
		char control[128];
		struct msghdr msg = { .msg_control = control, .msg_controllen = sizeof(control) };

		if (wait) {
			struct pollfd pfd = { .fd = fd };

			poll(&pfd, 1, 100);
			wait = false;
		}
		if (recvmsg(fd, &msg, MSG_ERRQUEUE | MSG_DONTWAIT) < 0)
			return;
		for (struct cmsghdr *cm = CMSG_FIRSTHDR(&msg); cm; cm = CMSG_NXTHDR(&msg, cm)) {
			struct sock_extended_err err;

			memcpy(&err, CMSG_DATA(cm), sizeof(err));
			if (err.ee_origin != SO_EE_ORIGIN_ZEROCOPY)
				continue;
			notified += err.ee_data - err.ee_info + 1;
			if (err.ee_code & SO_EE_CODE_ZEROCOPY_COPIED)
				copied += err.ee_data - err.ee_info + 1;
		}
	}
}

int main(int argc, char **argv)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(PORT) };
	unsigned long sends = 0, calls = 0, calls_done_at[NR_BUFS] = { 0 };
	double secs = argc > 3 ? atof(argv[3]) : 3, start, took;
	int one = 1, lfd, fd;
	bool zc;
	pthread_t receiver;
	char *bufs;

	if (argc < 3 || (strcmp(argv[2], "copy") && strcmp(argv[2], "zc")) || secs <= 0 ||
	    inet_pton(AF_INET, argv[1], &sa.sin_addr) != 1) {
		fprintf(stderr, "usage: zerocopy IPV4-ADDR copy|zc [SECONDS]\n");
		return 2;
	}
	zc = !strcmp(argv[2], "zc");
	bufs = aligned_alloc(4096, (size_t)CHUNK * NR_BUFS);
	if (!bufs)
		return 1;
	memset(bufs, 0x5a, (size_t)CHUNK * NR_BUFS);
	lfd = socket(AF_INET, SOCK_STREAM, 0);
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) || listen(lfd, 1)) {
		fprintf(stderr, "zerocopy: listening on %s:%d failed: %s\n", argv[1], PORT,
			strerror(errno));
		return 1;
	}
	pthread_create(&receiver, NULL, drain, &lfd);
	fd = socket(AF_INET, SOCK_STREAM, 0);
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) ||
	    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) ||
	    (zc && setsockopt(fd, SOL_SOCKET, SO_ZEROCOPY, &one, sizeof(one)))) {
		fprintf(stderr, "zerocopy: connecting failed: %s\n", strerror(errno));
		return 1;
	}
	start = now_s();
	while (now_s() - start < secs) {
		char *buf = bufs + (size_t)(sends % NR_BUFS) * CHUNK;
		size_t off = 0;

		while (zc && notified < calls_done_at[sends % NR_BUFS])
			reap(fd, true);
		while (off < CHUNK) {
			ssize_t n = send(fd, buf + off, CHUNK - off, zc ? MSG_ZEROCOPY : 0);

			if (n < 0 && errno == ENOBUFS) {
				reap(fd, true);
				continue;
			}
			if (n < 0) {
				fprintf(stderr, "zerocopy: send failed: %s\n", strerror(errno));
				return 1;
			}
			off += (size_t)n;
			calls++;
		}
		calls_done_at[sends % NR_BUFS] = calls;
		sends++;
		if (zc)
			reap(fd, false);
	}
	took = now_s() - start;
	shutdown(fd, SHUT_WR);
	pthread_join(receiver, NULL);
	printf("%-4s %.0f MiB/s (%lu sends of 128 KiB in %.1f s)", zc ? "zc" : "copy",
	       (double)sends * CHUNK / took / 1048576, sends, took);
	if (zc)
		printf(", %lu of %lu notified sends copied by the kernel", copied, notified);
	printf("\n");
	return 0;
}
