/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * -J/--config: nvme-cli's JSON configuration of hosts, subsystems and keys
 * (/etc/nvme/config.json's form), read with libnvme as nvme-cli reads it.
 * Taken from it, where the command line gives none: this host's NQN and ID,
 * and its DH-HMAC-CHAP keys (the host's, or those of the subsystem's port
 * the command connects to, with the controller's key).
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include <nvme/tree.h>

#include "cli.h"

/* The host entry for -q, or without -q the file's first. */
static nvme_host_t config_host(nvme_root_t r, const char *hostnqn)
{
	const char *nqn;
	nvme_host_t h;

	nvme_for_each_host(r, h) {
		nqn = nvme_host_get_hostnqn(h);
		if (!hostnqn || (nqn && !strcmp(nqn, hostnqn)))
			return h;
	}
	return NULL;
}

static bool same(const char *a, const char *b)
{
	return a && b && !strcmp(a, b);
}

/* The port of the subsystem the command connects to, as the file lists it. */
static nvme_ctrl_t config_port(nvme_host_t h, const struct nvmefs_connect_opts *opts)
{
	const char *trtype = opts->trtype ? opts->trtype : nvmefs_transport_name(0);
	nvme_subsystem_t s;
	nvme_ctrl_t ctrl;

	if (!opts->subnqn)
		return NULL;
	nvme_for_each_subsystem(h, s) {
		if (!same(nvme_subsystem_get_nqn(s), opts->subnqn))
			continue;
		nvme_subsystem_for_each_ctrl(s, ctrl) {
			if (same(nvme_ctrl_get_transport(ctrl), trtype) &&
			    same(nvme_ctrl_get_traddr(ctrl), opts->traddr) &&
			    (!opts->trsvcid || !nvme_ctrl_get_trsvcid(ctrl) ||
			     same(nvme_ctrl_get_trsvcid(ctrl), opts->trsvcid)))
				return ctrl;
		}
	}
	return NULL;
}

/* @value into the string the options point at, unless the command line gave one. */
static int take_string(const char *cmd, const char *what, const char *value, char *buf,
		       size_t size, const char **dst)
{
	if (*dst || !value)
		return EXIT_OK;
	if (strlen(value) >= size)
		return usage_error(cmd, "-J/--config: the %s is longer than %zu characters", what,
				   size - 1);
	memcpy(buf, value, strlen(value) + 1);
	*dst = buf;
	return EXIT_OK;
}

/* A copy of a key from the file in @dst, unless the command line gave that
 * secret: the caller takes it as it takes a secret given as an option. */
static int take_key(const struct connect_args *c, const char *cmd, const char *key, int which,
		    char **dst)
{
	if (!key || c->secret_opt[which])
		return EXIT_OK;
	*dst = strdup(key);
	if (!*dst) {
		fprintf(stderr, "nvmefs %s: -J/--config: out of memory\n", cmd);
		return EXIT_FAIL;
	}
	return EXIT_OK;
}

int connect_args_config(struct connect_args *c, const char *cmd, char *keys[2])
{
	const char *host_key, *ctrl_key = NULL;
	nvme_root_t r = NULL;
	nvme_host_t h;
	nvme_ctrl_t port;
	FILE *quiet;
	int ret;

	/* nvme-cli's word for no file. */
	if (!c->config || !strcmp(c->config, "none"))
		return EXIT_OK;
	quiet = fopen(c->config, "re");
	if (!quiet)
		return usage_error(cmd, "-J/--config: cannot read %s: %s", c->config, strerror(errno));
	fclose(quiet);
	/* libnvme's own messages would be lines of their own: ours says it. */
	quiet = fopen("/dev/null", "we");
	if (quiet)
		r = nvme_create_root(quiet, LOG_CRIT);
	if (!r) {
		ret = EXIT_FAIL;
		fprintf(stderr, "nvmefs %s: -J/--config: libnvme could not start: %s\n", cmd,
			strerror(errno));
		goto out;
	}
	if (nvme_read_config(r, c->config)) {
		ret = usage_error(cmd, "-J/--config: libnvme cannot read %s as nvme-cli's JSON "
				  "configuration (%s): check it with 'jq . %s'", c->config,
				  strerror(errno), c->config);
		goto out;
	}
	ret = EXIT_OK;
	h = config_host(r, c->opts.hostnqn);
	if (!h)
		goto out;
	ret = take_string(cmd, "host NQN", nvme_host_get_hostnqn(h), c->config_hostnqn,
			  sizeof(c->config_hostnqn), &c->opts.hostnqn);
	if (ret == EXIT_OK)
		ret = take_string(cmd, "host ID", nvme_host_get_hostid(h), c->config_hostid,
				  sizeof(c->config_hostid), &c->opts.hostid);
	host_key = nvme_host_get_dhchap_key(h);
	port = config_port(h, &c->opts);
	if (port) {
		if (nvme_ctrl_get_dhchap_host_key(port))
			host_key = nvme_ctrl_get_dhchap_host_key(port);
		ctrl_key = nvme_ctrl_get_dhchap_key(port);
	}
	if (ret == EXIT_OK)
		ret = take_key(c, cmd, host_key, 0, &keys[0]);
	if (ret == EXIT_OK)
		ret = take_key(c, cmd, ctrl_key, 1, &keys[1]);
out:
	if (r)
		nvme_free_tree(r);
	if (quiet)
		fclose(quiet);
	return ret;
}
