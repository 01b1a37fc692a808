/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The RDMA devices under the transport's controllers: whether there is
 * one (and, when there is none, which device node is missing), and which
 * contexts our protection domains are on, to let go of a removed device.
 * rdma_cm.c opens and closes what is on them.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "rdma_priv.h"
#include "../base/error.h"

/*
 * libibverbs lists only the devices whose /dev/infiniband/uverbsN it can
 * use, so a kernel device without its node (a container not given it) or
 * whose node this user may not open looks like no device at all: name it.
 */
int nvmefs_rdma_no_device_error(void)
{
	static const char sysdir[] = "/sys/class/infiniband_verbs";
	char node[64], ibdev[64] = "", path[128];
	struct dirent *d;
	int err;
	DIR *dir = opendir(sysdir);
	FILE *f;

	while (dir && (d = readdir(dir))) {
		if (strncmp(d->d_name, "uverbs", 6) || strlen(d->d_name) > 16)
			continue;
		snprintf(node, sizeof(node), "/dev/infiniband/%s", d->d_name);
		if (access(node, R_OK | W_OK) == 0)
			continue;
		err = errno;
		snprintf(path, sizeof(path), "%s/%s/ibdev", sysdir, d->d_name);
		f = fopen(path, "r");
		if (!f || !fgets(ibdev, sizeof(ibdev), f))
			snprintf(ibdev, sizeof(ibdev), "?");
		if (f)
			fclose(f);
		ibdev[strcspn(ibdev, "\n")] = '\0';
		closedir(dir);
		if (err == ENOENT)
			return nvmefs_error(-ENODEV, "the RDMA device %s has no device node %s here: "
					    "create it (udev does) or, in a container, pass it in "
					    "(--device %s, with /dev/infiniband/rdma_cm)", ibdev, node,
					    node);
		return nvmefs_error(-ENODEV, "the RDMA device %s is there but %s cannot be opened "
				    "(%s): give this user read-write access to it (a udev rule or "
				    "group)", ibdev, node, strerror(err));
	}
	if (dir)
		closedir(dir);
	return nvmefs_error(-ENODEV,
			    "no RDMA device on this machine: load soft-RoCE ('modprobe rdma_rxe; "
			    "rdma link add rxe0 type rxe netdev IFACE') or install an RDMA NIC and its "
			    "rdma-core provider; a target over NVMe/TCP needs none: -t tcp");
}

/*
 * The device contexts our controllers' protection domains are on, for
 * letting go of a device that is removed.  librdmacm opens every device it
 * resolves to once and keeps it open until it sees the device missing from
 * a non-empty device list: when the removed device was the only one (a
 * soft-RoCE device re-created, a single NIC reset), it never closes it.
 * Where the driver cannot detach user contexts (soft-RoCE), the kernel
 * removes the device only once every process has closed it, so the one open
 * context would block the removal, and the reconnect, for good.  Once none
 * of our controllers has anything on a context and its device is no longer
 * listed, its descriptors are pointed at /dev/null: the kernel's file goes,
 * and librdmacm later closes descriptors that are harmless to close.
 */
struct used_context {
	struct ibv_context *verbs;
	unsigned int pds;		/* controllers with a protection domain on it */
};

#define MAX_USED_CONTEXTS 16
static pthread_mutex_t contexts_lock = PTHREAD_MUTEX_INITIALIZER;
static struct used_context contexts[MAX_USED_CONTEXTS];

void nvmefs_rdma_context_use(struct ibv_context *verbs)
{
	struct used_context *free_slot = NULL;

	pthread_mutex_lock(&contexts_lock);
	for (unsigned int i = 0; i < MAX_USED_CONTEXTS; i++) {
		if (contexts[i].verbs == verbs) {
			contexts[i].pds++;
			goto out;
		}
		if (!contexts[i].verbs && !free_slot)
			free_slot = &contexts[i];
	}
	/* More devices than slots: such a context is just never let go of early. */
	if (free_slot)
		*free_slot = (struct used_context){ .verbs = verbs, .pds = 1 };
out:
	pthread_mutex_unlock(&contexts_lock);
}

void nvmefs_rdma_context_unuse(struct ibv_context *verbs)
{
	pthread_mutex_lock(&contexts_lock);
	for (unsigned int i = 0; i < MAX_USED_CONTEXTS; i++)
		if (contexts[i].verbs == verbs && contexts[i].pds)
			contexts[i].pds--;
	pthread_mutex_unlock(&contexts_lock);
}

static bool device_listed(struct ibv_device **list, int n, const struct ibv_device *dev)
{
	for (int i = 0; i < n; i++)
		if (list[i] == dev)
			return true;
	return false;
}

/* Lets go of the contexts nothing of ours uses whose device was removed. */
static void release_removed_contexts(struct ibv_device **list, int n)
{
	int devnull;

	pthread_mutex_lock(&contexts_lock);
	for (unsigned int i = 0; i < MAX_USED_CONTEXTS; i++) {
		struct ibv_context *verbs = contexts[i].verbs;

		if (!verbs || contexts[i].pds || device_listed(list, n, verbs->device))
			continue;
		devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
		if (devnull < 0)
			break;
		if (verbs->cmd_fd >= 0)
			dup3(devnull, verbs->cmd_fd, O_CLOEXEC);
		if (verbs->async_fd >= 0)
			dup3(devnull, verbs->async_fd, O_CLOEXEC);
		close(devnull);
		contexts[i].verbs = NULL;
	}
	pthread_mutex_unlock(&contexts_lock);
}

/* How many devices there are (-errno if they cannot be listed), after
 * letting go of removed ones. */
int nvmefs_rdma_list_devices(void)
{
	struct ibv_device **list;
	int n = 0;

	list = ibv_get_device_list(&n);
	if (!list)
		return errno == ENOSYS ? 0 : -errno;
	release_removed_contexts(list, n);
	ibv_free_device_list(list);
	return n;
}

int nvmefs_rdma_check_devices(void)
{
	int n = nvmefs_rdma_list_devices();

	if (n < 0)
		return nvmefs_error(n, "listing RDMA devices failed: %s: check /sys/class/infiniband "
				    "and the rdma-core installation", strerror(-n));
	if (n == 0)
		return nvmefs_rdma_no_device_error();
	return 0;
}
