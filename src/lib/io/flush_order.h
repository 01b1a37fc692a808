/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A flush after the writes before it.  NVMe's Flush commits what the
 * controller had completed when the Flush arrived, so a flush that is to
 * make every write submitted before it durable goes out only once each of
 * those writes has completed: after its retries, after an outage that held
 * it, after another path took it.  A caller's queue (io.c's I/O queue,
 * mpath.c's multipath queue) keeps its writes not completed yet in the order
 * they came, and its flushes waiting for them; only the queue's owner
 * touches either list.
 */
#ifndef NVMEFS_FLUSH_ORDER_H
#define NVMEFS_FLUSH_ORDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct flush_order_entry {
	struct flush_order_entry *prev, *next;
	/* A write's number; a flush's, the number of the last write before it. */
	uint64_t seq;
};

struct flush_order {
	uint64_t seq;			/* writes numbered so far */
	struct flush_order_entry *writes_head, *writes_tail;
	struct flush_order_entry *flushes_head, *flushes_tail;
};

/* A write was accepted: flushes after it wait for it. */
static inline void flush_order_write_start(struct flush_order *fo, struct flush_order_entry *e)
{
	e->seq = ++fo->seq;
	e->next = NULL;
	e->prev = fo->writes_tail;
	if (fo->writes_tail)
		fo->writes_tail->next = e;
	else
		fo->writes_head = e;
	fo->writes_tail = e;
}

/* A write completed, or was not accepted after all. */
static inline void flush_order_write_done(struct flush_order *fo, struct flush_order_entry *e)
{
	if (e->prev)
		e->prev->next = e->next;
	else
		fo->writes_head = e->next;
	if (e->next)
		e->next->prev = e->prev;
	else
		fo->writes_tail = e->prev;
	e->prev = e->next = NULL;
}

/* Whether a flush has writes before it to wait for; it then waits in @e,
 * until flush_order_ready() gives it back. */
static inline bool flush_order_flush_waits(struct flush_order *fo, struct flush_order_entry *e)
{
	if (!fo->writes_head)
		return false;
	e->seq = fo->seq;
	e->prev = e->next = NULL;
	if (fo->flushes_tail)
		fo->flushes_tail->next = e;
	else
		fo->flushes_head = e;
	fo->flushes_tail = e;
	return true;
}

/* The oldest waiting flush whose writes have all completed, taken off the
 * list; NULL if there is none. */
static inline struct flush_order_entry *flush_order_ready(struct flush_order *fo)
{
	struct flush_order_entry *e = fo->flushes_head;

	if (!e || (fo->writes_head && fo->writes_head->seq <= e->seq))
		return NULL;
	fo->flushes_head = e->next;
	if (!fo->flushes_head)
		fo->flushes_tail = NULL;
	e->next = NULL;
	return e;
}

#endif /* NVMEFS_FLUSH_ORDER_H */
