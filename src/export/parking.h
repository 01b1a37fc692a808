/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Requests a front end read in for a worker (FUSE requests from /dev/fuse)
 * but that get no request buffer yet, copied out of the buffer they came in
 * (or, posted ones, kept where they were posted):
 * I/O to a namespace that has no usable path (held), so that it takes no
 * buffer another namespace's I/O could use, and I/O read into the spare
 * while every buffer was taken (ready).  What they take together is
 * bounded per export (a mount).
 */
#ifndef NVMEFS_EXPORT_PARKING_H
#define NVMEFS_EXPORT_PARKING_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The parked requests of a whole mount, headers and write data: past it a
 * front end reads requests only into a free buffer.  man/nvmefs-mount.1
 * states it. */
#define PARK_MAX_BYTES ((size_t)64 << 20)

/* How often a worker looks again whether held requests' namespaces have a
 * path back, in ms: what a path's return may wait more, and how often a
 * worker with nothing else to do wakes while it holds requests. */
#define PARK_RECHECK_MS 50

struct exp_post;

struct parked {
	struct parked *next;
	uint32_t nsid;
	/* A posted request, which stays where it was posted; else the @len
	 * bytes of one read in. */
	struct exp_post *post;
	size_t len;
	uint8_t bytes[];
};

struct park_list {
	struct parked *head, *tail;
};

/* Whether the mount, with @total bytes parked, parks another request. */
bool park_room(atomic_size_t *total);
/* Copies the request of @len bytes at @buf, I/O to @nsid, to the end of
 * @l, counted in @total; -ENOMEM. */
int park_add(struct park_list *l, atomic_size_t *total, uint32_t nsid, const uint8_t *buf,
	     size_t len);
/* Parks a copy of request @req, I/O to @nsid, and of its write data if
 * any (@req->size bytes at @req->data), at the end of @l; -ENOMEM. */
int park_add_copy(struct park_list *l, atomic_size_t *total, uint32_t nsid,
		  const struct exp_post *req);
/* Parks the posted request @post, I/O to @nsid, at the end of @l; -ENOMEM. */
int park_add_post(struct park_list *l, atomic_size_t *total, uint32_t nsid,
		  struct exp_post *post);
void park_append(struct park_list *l, struct parked *p);
/* The oldest of @l, taken off it (still counted), or NULL. */
struct parked *park_pop(struct park_list *l);
/* Frees @p, taken off its list, and uncounts it from @total. */
void park_free(struct parked *p, atomic_size_t *total);
/* Moves the requests of @from whose namespace @held() says is no longer
 * held to the end of @to, each list keeping its order; @force moves them
 * all.  Returns how many moved. */
unsigned int park_release(struct park_list *from, struct park_list *to,
			  bool (*held)(void *arg, uint32_t nsid), void *arg, bool force);

#endif /* NVMEFS_EXPORT_PARKING_H */
