/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Requests parked by the mount's workers (parking.h): copied out, counted
 * against one bound for the mount, and released in order.
 */
#include "config.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "parking.h"

/* What one parked request costs: its copy and its record. */
static size_t parked_bytes(size_t len)
{
	return sizeof(struct parked) + len;
}

bool park_room(atomic_size_t *total)
{
	return atomic_load_explicit(total, memory_order_relaxed) < PARK_MAX_BYTES;
}

void park_append(struct park_list *l, struct parked *p)
{
	p->next = NULL;
	if (l->tail)
		l->tail->next = p;
	else
		l->head = p;
	l->tail = p;
}

/* A record of @len bytes for I/O to @nsid, counted in @total, at the end of @l. */
static struct parked *park_new(struct park_list *l, atomic_size_t *total, uint32_t nsid,
			       size_t len)
{
	struct parked *p = malloc(parked_bytes(len));

	if (!p)
		return NULL;
	p->nsid = nsid;
	p->post = NULL;
	p->len = len;
	atomic_fetch_add_explicit(total, parked_bytes(len), memory_order_relaxed);
	park_append(l, p);
	return p;
}

int park_add(struct park_list *l, atomic_size_t *total, uint32_t nsid, const uint8_t *buf,
	     size_t len)
{
	struct parked *p = park_new(l, total, nsid, len);

	if (!p)
		return -ENOMEM;
	memcpy(p->bytes, buf, len);
	return 0;
}

int park_add_copy(struct park_list *l, atomic_size_t *total, uint32_t nsid,
		  const struct exp_post *req)
{
	size_t data = req->data ? req->size : 0;
	struct parked *p = park_new(l, total, nsid, sizeof(*req) + data);
	struct exp_post *copy;

	_Static_assert(offsetof(struct parked, bytes) % _Alignof(struct exp_post) == 0,
		       "a parked record's bytes hold a struct exp_post");
	if (!p)
		return -ENOMEM;
	copy = (struct exp_post *)p->bytes;
	*copy = *req;
	if (data) {
		memcpy(copy + 1, req->data, data);
		copy->data = copy + 1;
		copy->copy = true;
	}
	p->post = copy;
	return 0;
}

int park_add_post(struct park_list *l, atomic_size_t *total, uint32_t nsid,
		  struct exp_post *post)
{
	struct parked *p = park_new(l, total, nsid, 0);

	if (!p)
		return -ENOMEM;
	p->post = post;
	return 0;
}

struct parked *park_pop(struct park_list *l)
{
	struct parked *p = l->head;

	if (p) {
		l->head = p->next;
		if (!l->head)
			l->tail = NULL;
		p->next = NULL;
	}
	return p;
}

void park_free(struct parked *p, atomic_size_t *total)
{
	atomic_fetch_sub_explicit(total, parked_bytes(p->len), memory_order_relaxed);
	free(p);
}

unsigned int park_release(struct park_list *from, struct park_list *to,
			  bool (*held)(void *arg, uint32_t nsid), void *arg, bool force)
{
	struct parked *p = from->head, *prev = NULL, *next;
	/* Held requests are mostly of one namespace: asked once per run of it. */
	uint32_t asked = 0;
	bool answer = true;
	unsigned int moved = 0;

	for (; p; p = next) {
		next = p->next;
		if (!force && p->nsid != asked) {
			asked = p->nsid;
			answer = held(arg, p->nsid);
		}
		if (!force && answer) {
			prev = p;
			continue;
		}
		if (prev)
			prev->next = next;
		else
			from->head = next;
		if (from->tail == p)
			from->tail = prev;
		park_append(to, p);
		moved++;
	}
	return moved;
}
