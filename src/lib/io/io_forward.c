/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * I/O queues sharing a connection, while the target grants fewer queues
 * than were created (a target reconfigured while we were away: nvmet's
 * attr_qid_max).  Linux maps its CPUs onto the queues that remain; here
 * each queue has one owning thread, and only that thread may touch its
 * connection, its request slots and its callers.  So a queue left without
 * a connection of its own hands its I/O to a host queue's owner, which
 * sends it on its connection, and gets each I/O back, completed, to call
 * its caller from its own thread.  The hand-over is a locked list and an
 * eventfd write; none of it happens while every queue has its own
 * connection, when the I/O path only reads the one word that says there
 * is no mail.  The owner takes its mail in io_poll.c's poll, which this file
 * never calls.
 */
#include <sys/eventfd.h>

#include "io_forward.h"

enum {
	MAIL_INBOX = 1 << 0,
	MAIL_RETURNED = 1 << 1,
};

static void mail_put(struct nvmefs_ioq *to, unsigned int kind, struct nvmefs_io *io)
{
	struct nvmefs_io **head = kind == MAIL_INBOX ? &to->inbox_head : &to->returned_head;
	struct nvmefs_io **tail = kind == MAIL_INBOX ? &to->inbox_tail : &to->returned_tail;

	io->next = NULL;
	pthread_mutex_lock(&to->mail_lock);
	if (*tail)
		(*tail)->next = io;
	else
		*head = io;
	*tail = io;
	atomic_fetch_or(&to->mail, kind);
	/* Under the lock, so that the taker's read of the counter cannot
	 * come between this and the list it goes with. */
	eventfd_write(to->wake_fd, 1);
	pthread_mutex_unlock(&to->mail_lock);
}

void nvmefs_io_forward(struct nvmefs_ioq *host, struct nvmefs_io *io)
{
	io->pending = false;
	mail_put(host, MAIL_INBOX, io);
}

void nvmefs_io_return(struct nvmefs_io *io)
{
	mail_put(io->owner, MAIL_RETURNED, io);
}

void nvmefs_io_forward_held(struct nvmefs_ioq *ioq, struct nvmefs_ioq *host)
{
	struct nvmefs_io *io, *next;

	io = ioq->pending_head;
	ioq->pending_head = ioq->pending_tail = NULL;
	for (; io; io = next) {
		next = io->next;
		/* What this queue carried for another goes on to the new carrier. */
		if (io->owner != ioq)
			ioq->nr_carried--;
		nvmefs_io_forward(host, io);
	}
}
