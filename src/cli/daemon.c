/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Serving a subsystem until stopped, for mount and ublk add: the
 * connection and the daemon's life (daemon.h).
 *
 * The daemon forks before it connects: memory registered with an RDMA
 * device does not survive fork() (the child would write to copies the
 * device never sees).  The parent waits on a pipe for the child to say it
 * is live (a NUL byte, then what to print on stdout), or why it failed (a
 * line), and exits with that.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <syslog.h>
#include <unistd.h>

#include "daemon.h"
#include "../export/engine.h"

void daemon_args_init(struct daemon_args *d, const char *cmd)
{
	memset(d, 0, sizeof(*d));
	d->cmd = cmd;
	d->pidfile_fd = -1;
	d->ready_fd = -1;
}

/*
 * One that was there (a previous run's) is reused, and left if the run
 * fails; one made here goes with the run.
 */
static int open_pidfile(struct daemon_args *d)
{
	d->pidfile_fd = open(d->pidfile, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOCTTY, 0644);
	if (d->pidfile_fd >= 0)
		d->pidfile_written = true;
	else if (errno == EEXIST)
		d->pidfile_fd = open(d->pidfile, O_WRONLY | O_CLOEXEC | O_NOCTTY);
	if (d->pidfile_fd < 0) {
		fprintf(stderr, "nvmefs %s: --pidfile %s cannot be written: %s: give a file in a "
			"directory this user may write to\n", d->cmd, d->pidfile, strerror(errno));
		return EXIT_FAIL;
	}
	return EXIT_OK;
}

int daemon_prepare(struct daemon_args *d, const char *prefix)
{
	if (d->pidfile && d->pidfile[0] != '/') {
		char *abs = realpath(".", NULL);

		if (abs && asprintf(&d->pidfile_abs, "%s/%s", abs, d->pidfile) > 0)
			d->pidfile = d->pidfile_abs;
		else
			d->pidfile_abs = NULL;
		free(abs);
	}
	if (d->pidfile && open_pidfile(d))
		return EXIT_FAIL;
	/* In the foreground, lines on stderr as every command prints them,
	 * without the system log's "nvmefs[PID]: ". */
	openlog("nvmefs", LOG_PID, LOG_DAEMON);
	exp_log_stderr(d->foreground ? prefix : NULL);
	return EXIT_OK;
}

static void write_pidfile(struct daemon_args *d)
{
	char line[32];
	int len = snprintf(line, sizeof(line), "%ld\n", (long)getpid());

	if (ftruncate(d->pidfile_fd, 0) || pwrite(d->pidfile_fd, line, (size_t)len, 0) != len)
		exp_log("writing the pidfile %s failed: %m", d->pidfile);
	close(d->pidfile_fd);
	d->pidfile_fd = -1;
	d->pidfile_written = true;
}

void daemon_ready(struct daemon_args *d, const char *out)
{
	size_t len = out ? strlen(out) : 0;
	int null;

	if (d->pidfile_fd >= 0)
		write_pidfile(d);
	if (d->ready_fd < 0) {
		if (out) {
			fputs(out, stdout);
			fflush(stdout);
		}
		return;
	}
	if (write(d->ready_fd, "", 1) != 1 || (len && write(d->ready_fd, out, len) != (ssize_t)len))
		exp_log("telling the parent that the %s is live failed: %m", d->cmd);
	close(d->ready_fd);
	d->ready_fd = -1;
	null = open("/dev/null", O_RDWR);
	if (null >= 0) {
		dup2(null, STDIN_FILENO);
		dup2(null, STDOUT_FILENO);
		dup2(null, STDERR_FILENO);
		if (null > STDERR_FILENO)
			close(null);
	}
}

void daemon_fail(struct daemon_args *d, const char *msg)
{
	/* The daemon's parent prints it; in the foreground, we do. */
	if (d->ready_fd >= 0 && write(d->ready_fd, msg, strlen(msg)) < 0)
		d->ready_fd = -1;
	if (d->foreground)
		fputs(msg, stderr);
	syslog(LOG_ERR, "%.*s", (int)strlen(msg) - 1, msg);
}

void daemon_done(struct daemon_args *d)
{
	if (d->pidfile_fd >= 0)
		close(d->pidfile_fd);
	d->pidfile_fd = -1;
	if (d->pidfile_written)
		unlink(d->pidfile);
	d->pidfile_written = false;
	free(d->pidfile_abs);
	d->pidfile_abs = NULL;
}

/* The child's first byte: NUL (live, what follows goes to stdout until
 * EOF) or a failure's line.  Nothing: it died. */
static int wait_child(struct daemon_args *d, int fd, pid_t pid)
{
	char buf[4096];
	ssize_t n, len = 0;
	int status;

	while ((n = read(fd, buf + len, sizeof(buf) - 1 - (size_t)len)) > 0) {
		len += n;
		if (buf[0] != '\0' && memchr(buf, '\n', (size_t)len))
			break;
		if (buf[0] == '\0' && (size_t)len == sizeof(buf) - 1) {
			fwrite(buf + 1, 1, (size_t)len - 1, stdout);
			buf[0] = '\0';
			len = 1;
		}
	}
	close(fd);
	if (len >= 1 && buf[0] == '\0') {
		fwrite(buf + 1, 1, (size_t)len - 1, stdout);
		return finish_output(d->cmd, EXIT_OK);
	}
	if (len > 0) {
		buf[len] = '\0';
		fputs(buf, stderr);
		waitpid(pid, &status, 0);
		return EXIT_FAIL;
	}
	waitpid(pid, &status, 0);
	fprintf(stderr, "nvmefs %s: the daemon ended before it was live (%s %d): see the "
		"system log, or run with -f\n", d->cmd, WIFSIGNALED(status) ? "signal" : "exit status",
		WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
	return EXIT_FAIL;
}

int daemon_run(struct daemon_args *d, int (*serve)(void *arg), void *arg)
{
	int fds[2], ret;
	pid_t pid;

	if (d->foreground) {
		ret = serve(arg);
		daemon_done(d);
		return ret;
	}
	/* Close-on-exec: a helper the daemon runs (fusermount3 for auto_unmount
	 * stays for the life of the mount) must not hold the parent's EOF back. */
	if (pipe2(fds, O_CLOEXEC) < 0) {
		fprintf(stderr, "nvmefs %s: creating a pipe failed: %s\n", d->cmd, strerror(errno));
		return EXIT_FAIL;
	}
	fflush(stdout);
	pid = fork();
	if (pid < 0) {
		fprintf(stderr, "nvmefs %s: fork failed: %s\n", d->cmd, strerror(errno));
		return EXIT_FAIL;
	}
	if (pid == 0) {
		close(fds[0]);
		d->ready_fd = fds[1];
		setsid();
		if (chdir("/") < 0)
			exp_logp(LOG_WARNING, "chdir / failed: %m");
		ret = serve(arg);
		daemon_done(d);
		exit(ret);
	}
	close(fds[1]);
	ret = wait_child(d, fds[0], pid);
	/* A daemon that failed removed what it made; one never started did
	 * not.  A live one owns it now. */
	if (ret != EXIT_OK && d->pidfile_written)
		unlink(d->pidfile);
	d->pidfile_written = false;
	return ret;
}

/*
 * Each controller state transition, logged once, from the library's
 * thread (exp_logp() is thread-safe; in the foreground the line goes to
 * stderr too).  Losing the controller is a warning (I/O is held
 * and may yet succeed), giving it up an error, being live again news.
 */
static void on_ctrl_event(void *arg, const struct nvmefs_ctrl_status *st, const char *msg)
{
	int prio = st->state == NVMEFS_CTRL_LIVE ? LOG_INFO
		   : st->state == NVMEFS_CTRL_DELETED ? LOG_ERR : LOG_WARNING;

	(void)arg;
	exp_logp(prio, "%s", msg);
}

/* Why no path could be connected, for the daemon's parent and syslog. */
static const char *no_path_subnqn;

static const char *no_path_msg(void)
{
	static char msg[400];

	snprintf(msg, sizeof(msg), "no path to %s could be connected (each one's reason is above, "
		 "or in the foreground's output)", no_path_subnqn);
	return msg;
}

/* Each path's transitions are logged as the single controller's are. */
static void setup_path(struct nvmefs_ctrl *ctrl, void *arg)
{
	nvmefs_ctrl_set_event_cb(ctrl, on_ctrl_event, arg);
}

int daemon_connect(struct connect_args *conn, const struct path_args *paths,
		   const struct nvmefs_io_opts *io, const char *cmd, struct nvmefs_ctrl **ctrlp,
		   struct nvmefs_subsys **subsysp, const char *(**why)(void))
{
	char addr[300];
	int ret;

	*ctrlp = NULL;
	*subsysp = NULL;
	*why = nvmefs_errmsg;
	if (path_args_multipath(paths)) {
		if (paths_connect(conn, paths, io, cmd, setup_path, NULL, subsysp)) {
			/* paths_connect() told why on stderr; the daemon's parent
			 * and syslog get the gist. */
			*why = no_path_msg;
			no_path_subnqn = conn->opts.subnqn;
			return -EIO;
		}
		*ctrlp = nvmefs_subsys_path(*subsysp, 0);
		return 0;
	}
	verbose(conn, cmd, "connecting to %s at %s, timeout %u ms", conn->opts.subnqn,
		connect_args_where(&conn->opts, addr, sizeof(addr)), conn->opts.timeout_ms);
	ret = nvmefs_ctrl_connect(&conn->opts, ctrlp);
	connect_args_forget_secrets(conn);
	if (ret < 0)
		return ret;
	verbose_connected(conn, cmd, *ctrlp);
	nvmefs_ctrl_set_event_cb(*ctrlp, on_ctrl_event, NULL);
	/* A head of this one path, which all I/O goes through. */
	ret = nvmefs_ctrl_create_io_queues(*ctrlp, io);
	if (ret == 0)
		ret = nvmefs_subsys_create_single(*ctrlp, subsysp);
	return ret;
}

void daemon_disconnect(struct nvmefs_ctrl *ctrl, struct nvmefs_subsys *subsys)
{
	/* Tearing the controllers down on the way out is no outage to log. */
	if (subsys) {
		for (unsigned int i = 0; i < nvmefs_subsys_path_count(subsys); i++)
			nvmefs_ctrl_set_event_cb(nvmefs_subsys_path(subsys, i), NULL, NULL);
		nvmefs_subsys_destroy(subsys);
		return;
	}
	if (ctrl)
		nvmefs_ctrl_set_event_cb(ctrl, NULL, NULL);
	nvmefs_ctrl_disconnect(ctrl);
}

/* Whether a path over @trtype (NULL: the library's default) pins what it
 * registers, as its transport says; one the library has not pins nothing,
 * and its connect says so. */
static bool trtype_pins(const char *trtype)
{
	struct nvmefs_transport_info info = { .size = sizeof(info) };

	return nvmefs_transport_info(trtype, &info) == 0 && info.pins_memory;
}

/* --all-paths learns its paths from discovery, after this is asked: they
 * are taken to be one, over -t's transport, as the memlock check always
 * took them. */
unsigned int daemon_pinning_paths(const struct connect_args *conn, const struct path_args *paths)
{
	unsigned int n = trtype_pins(conn->opts.trtype);

	if (paths->all_paths)
		return n;
	for (unsigned int i = 0; i < paths->nr; i++)
		n += trtype_pins(paths->trtype[i] ? paths->trtype[i] : conn->opts.trtype);
	return n;
}
