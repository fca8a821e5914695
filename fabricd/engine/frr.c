// SPDX-License-Identifier: GPL-2.0-or-later
/* engine/frr.c - frr.conf, frr-reload.py and vtysh for the EVPN control plane. */
#define _GNU_SOURCE /* pipe2 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/addr.h"
#include "base/diag.h"
#include "base/log.h"
#include "base/util.h"
#include "engine/frr.h"
#include "engine/frr_priv.h"
#include "engine/plan.h"
#include "kinds/frr.h"

#define FRR_RUN_DIR "/var/run/frr"
#define FRR_RELOAD  "/usr/lib/frr/frr-reload.py"
#define VTYSH	    "/usr/bin/vtysh"
/*
 * A show command's JSON: `show evpn vni detail json` at 1024 VNIs with 63
 * remote VTEPs each is some 5 MB (indented); a MAC table of every guest more.
 */
#define FRR_OUTPUT_MAX (64U << 20)

extern char **environ;

int frr_pathspace_check(const char *name)
{
	size_t n =
	    strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.");

	if (*name && !name[n] && strlen(name) <= 64 && name[0] != '.')
		return 0;
	log_error("--frr-pathspace \"%s\": give the NAME FRR's daemons were started with (-N "
		  "NAME): up to 64 letters, digits, \"-\", \"_\" or \".\", not starting with \".\"",
		  name);
	return -1;
}

void frr_conf_path(const char *pathspace, char *buf, size_t len)
{
	if (pathspace)
		snprintf(buf, len, FRR_CONF_DIR "/%s/frr.conf", pathspace);
	else
		snprintf(buf, len, FRR_CONF_DIR "/frr.conf");
}

/*
 * The whole file, "" when there is none; never through a link of another
 * user's (-EPERM): the frr user owns /etc/frr, and a link of theirs at
 * frr.conf would have root read a file they choose (and plan from it).
 */
static int read_text(const char *path, char **out)
{
	char *buf = NULL;
	size_t len = 0;
	int fd = open_trusted(path, O_RDONLY);
	FILE *f = fd >= 0 ? fdopen(fd, "re") : NULL, *m;
	char chunk[4096];
	size_t n;

	*out = NULL;
	if (fd == -ENOENT)
		return (*out = strdup("")) ? 0 : -ENOMEM;
	if (fd < 0)
		return fd;
	if (!f) {
		close(fd);
		return -ENOMEM;
	}
	m = open_memstream(&buf, &len);
	if (!m) {
		fclose(f);
		return -ENOMEM;
	}
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		fwrite(chunk, 1, n, m);
	n = (size_t)ferror(f);
	fclose(f);
	if (fclose(m) != 0 || n) {
		free(buf);
		return n ? -EIO : -ENOMEM;
	}
	*out = buf;
	return 0;
}

/*
 * The mark of a reload under way: written (with the writer's pid) before
 * frr.conf is, removed once frr-reload.py is done. One whose writer is gone
 * means the file may hold what FRR never loaded. On the tmpfs /run: after a
 * reboot FRR loads the file itself.
 */
static void pending_path(const char *pathspace, char *buf, size_t len)
{
	if (pathspace)
		snprintf(buf, len, "/run/fabricd/frr-reload.ps-%s.pending", pathspace);
	else
		snprintf(buf, len, "/run/fabricd/frr-reload.pending");
}

/* Whether pid is a live fabricd (a pid reused by another program is not the writer). */
static bool fabricd_alive(long pid)
{
	char path[64], *comm = NULL;
	bool alive;

	snprintf(path, sizeof(path), "/proc/%ld/comm", pid);
	if (pid <= 0 || read_text(path, &comm) < 0)
		return false;
	alive = !strcmp(comm, "fabricd\n");
	free(comm);
	return alive;
}

/* pid: this process's while it reloads; 0 marks a reload still to be done again */
static void pending_mark(const char *pathspace, long pid_now)
{
	char path[PATH_MAX], pid[24];
	int n = snprintf(pid, sizeof(pid), "%ld\n", pid_now);

	pending_path(pathspace, path, sizeof(path));
	mkdir("/run/fabricd", 0755);
	if (write_file_atomic(path, pid, (size_t)n, 0644, false) < 0)
		log_debug("frr: cannot write %s: %s", path, strerror(errno));
}

/*
 * The reload done: what the file says is what FRR runs. Unless one to be
 * done again failed (still): the file put back is what FRR never loaded.
 */
static void pending_done(const char *pathspace, bool still)
{
	char path[PATH_MAX];

	pending_path(pathspace, path, sizeof(path));
	if (still)
		pending_mark(pathspace, 0);
	else
		unlink(path);
}

static bool pending_cut_short(const char *pathspace)
{
	char path[PATH_MAX], *text = NULL;
	long pid;
	bool gone;

	pending_path(pathspace, path, sizeof(path));
	if (read_text(path, &text) < 0 || !*text) { /* "" also when there is none */
		free(text);
		return false;
	}
	pid = strtol(text, NULL, 10);
	gone = !fabricd_alive(pid);
	free(text);
	return gone;
}

static int run(char *const argv[], char **out, char **err_text, int timeout_ms);

/*
 * The daemon observes on every pass (a burst of zebra's FDB entries makes
 * many): FRR's running configuration is read at most every RUNNING_CHECK_MS
 * for one block, and at once when the block or the pathspace changed. A
 * reload after which FRR still lacks a line (a line this FRR does not show,
 * a setting it refuses) is not repeated every second: the wait doubles with
 * each, up to RUNNING_CHECK_MS << RUNNING_FAILS_MAX, said once.
 */
#define RUNNING_CHECK_MS  1000
#define RUNNING_FAILS_MAX 6
static struct {
	char *key; /* pathspace + "\n" + block of the last check */
	double at;
	bool served;	    /* a pass took the result without reading: read again when due */
	bool loaded;	    /* frr-reload.py loaded the block since the last reading */
	unsigned int fails; /* readings right after a load that still lacked a line */
	char lacks[160];
} running_cache;

static double running_wait(void)
{
	return (double)RUNNING_CHECK_MS * (double)(1U << running_cache.fails);
}

bool frr_running_recheck_due(void)
{
	return running_cache.served && clock_mono_ms() - running_cache.at >= running_wait();
}

static void running_forget(void)
{
	free(running_cache.key);
	memset(&running_cache, 0, sizeof(running_cache));
}

/* Keeps key (taken) and lacks as the last reading, and the fails of that key. */
static void running_store(char *key, const char *lacks, bool loaded)
{
	unsigned int fails =
	    running_cache.key && key && !strcmp(running_cache.key, key) ? running_cache.fails : 0;

	running_forget();
	running_cache.key = key;
	running_cache.at = clock_mono_ms();
	running_cache.loaded = loaded;
	running_cache.served = loaded; /* to be seen running, once FRR had its moment */
	running_cache.fails = fails;
	snprintf(running_cache.lacks, sizeof(running_cache.lacks), "%s", lacks);
}

/*
 * After a reload that loaded block: FRR runs it (frr-reload.py checked), and
 * bgpd may take a moment to show it all (advertise-all-vni again, while the
 * VNIs it dropped are still going): not read again before RUNNING_CHECK_MS,
 * so that the daemon does not reload again and again meanwhile.
 */
static void running_loaded(const char *pathspace, const char *block)
{
	char *key = NULL;

	if (block && asprintf(&key, "%s\n%s", pathspace ? pathspace : "", block) < 0)
		key = NULL;
	running_store(key, "", true);
}

/* A reading right after a load that still lacks a line: wait longer before the next load. */
static void running_load_failed(const char *lacks)
{
	if (running_cache.fails < RUNNING_FAILS_MAX)
		running_cache.fails++;
	if (running_cache.fails == 1)
		log_warn("frr: FRR's running configuration still lacks \"%s\" after "
			 "frr-reload.py loaded fabricd's part; loading it again less often (up to "
			 "every %d s): see FRR's log for why it does not take it",
			 lacks, (RUNNING_CHECK_MS << RUNNING_FAILS_MAX) / 1000);
	running_cache.lacks[0] = '\0'; /* until the longer wait is over */
	running_cache.served = true;
}

/* Says once that vtysh did not answer (timed_out), until it answers again. */
static void running_timed_out(bool timed_out)
{
	static bool said;

	if (timed_out && !said)
		log_warn(
		    "frr: vtysh -c 'show running-config' did not answer within %d s (is a "
		    "bgpd or zebra stopped or stuck?): FRR's running configuration is not "
		    "compared with fabricd's part until it does; see `systemctl status frr` and "
		    "FRR's log",
		    FRR_READ_TIMEOUT_MS / 1000);
	said = timed_out;
}

/* o->running_lacks, from `vtysh -c 'show running-config'` (left "" when vtysh fails). */
static void check_running(const char *pathspace, struct frr_obs *o)
{
	char *argv[8], *out = NULL, *key = NULL;
	bool same, loaded;
	int n = 0, ret;

	if (asprintf(&key, "%s\n%s", pathspace ? pathspace : "", o->block) < 0)
		return;
	same = running_cache.key && !strcmp(running_cache.key, key);
	if (same && clock_mono_ms() - running_cache.at < running_wait()) {
		snprintf(o->running_lacks, sizeof(o->running_lacks), "%s", running_cache.lacks);
		running_cache.served = true;
		free(key);
		return;
	}
	loaded = same && running_cache.loaded;
	argv[n++] = (char *)VTYSH;
	if (pathspace) {
		argv[n++] = (char *)"-N";
		argv[n++] = (char *)pathspace;
	}
	argv[n++] = (char *)"-c";
	argv[n++] = (char *)"show running-config";
	argv[n] = NULL;
	ret = run(argv, &out, NULL, FRR_READ_TIMEOUT_MS);
	if (ret == 0 && out)
		frr_running_lacks(out, o->block, o->running_lacks, sizeof(o->running_lacks));
	free(out);
	running_timed_out(ret == -ETIMEDOUT);
	running_store(key, o->running_lacks, false);
	if (loaded && o->running_lacks[0]) {
		running_load_failed(o->running_lacks);
		o->running_lacks[0] = '\0';
	} else if (!o->running_lacks[0])
		running_cache.fails = 0;
}

int frr_observe(const char *pathspace, const char *owner, struct frr_obs *o)
{
	int ret;

	memset(o, 0, sizeof(*o));
	if (frr_running(pathspace, o->not_running, sizeof(o->not_running)))
		o->not_running[0] = '\0';
	o->reload_cut_short = pending_cut_short(pathspace);
	frr_conf_path(pathspace, o->path, sizeof(o->path));
	ret = read_text(o->path, &o->conf);
	if (ret == -ENOMEM)
		return ret;
	if (ret < 0) {
		/* not fatal: a cluster without EVPN does not need it (the plan says what it means)
		 */
		o->read_error = -ret;
		return (o->conf = strdup("")) ? 0 : -ENOMEM;
	}
	ret = frr_extract(o->conf, owner, &o->block);
	if (ret == 0 && o->block && !o->not_running[0] && !o->reload_cut_short)
		check_running(pathspace, o);
	return ret;
}

void frr_obs_free(struct frr_obs *o)
{
	free(o->conf);
	free(o->block);
	memset(o, 0, sizeof(*o));
}

bool frr_daemon_alive(const char *pathspace, const char *daemon)
{
	char path[PATH_MAX], *text = NULL;
	long pid;
	bool alive;

	if (pathspace)
		snprintf(path, sizeof(path), FRR_RUN_DIR "/%s/%s.pid", pathspace, daemon);
	else
		snprintf(path, sizeof(path), FRR_RUN_DIR "/%s.pid", daemon);
	if (read_text(path, &text) < 0)
		return false;
	pid = strtol(text, NULL, 10);
	alive = pid > 0 && (kill((pid_t)pid, 0) == 0 || errno == EPERM);
	free(text);
	return alive;
}

bool frr_running(const char *pathspace, char *why, size_t len)
{
	static const char *const daemons[] = {"zebra", "bgpd"};

	for (size_t i = 0; i < 2; i++) {
		if (frr_daemon_alive(pathspace, daemons[i]))
			continue;
		snprintf(why, len,
			 "FRR's %s is not running%s%s (no live PID in " FRR_RUN_DIR "%s%s/%s.pid); "
			 "start FRR's zebra and bgpd first (systemctl start frr, or zebra and "
			 "bgpd with -N NAME for a pathspace): fabricd never starts FRR",
			 daemons[i], pathspace ? " in pathspace " : "", pathspace ? pathspace : "",
			 pathspace ? "/" : "", pathspace ? pathspace : "", daemons[i]);
		return false;
	}
	return true;
}

/* How long a vtysh or frr-reload.py run may take before it is killed. */
#define FRR_RUN_TIMEOUT_MS 60000

/*
 * Reads the child's stdout and stderr together (either may fill its pipe
 * while the other is read) into ms[], until both close or timeout_ms have
 * passed (a clock, not idle time: a child that writes a byte now and then
 * is no reason to wait longer). 0, -ETIMEDOUT, or -EFBIG when the child
 * wrote more than FRR_OUTPUT_MAX to one of them (not kept: a cut answer is
 * no JSON). open_memstream's size is known only at a flush, so counted here.
 */
static int collect(const int fds[2], FILE *ms[2], int timeout_ms)
{
	struct pollfd pfd[2] = {{.fd = fds[0], .events = POLLIN}, {.fd = fds[1], .events = POLLIN}};
	double deadline = clock_mono_ms() + timeout_ms;
	size_t got_total[2] = {0, 0};
	int open_fds = 2;

	while (open_fds) {
		double left = deadline - clock_mono_ms();
		int n;

		if (left <= 0)
			return -ETIMEDOUT;
		n = poll(pfd, 2, left < 100 ? (int)left + 1 : 100);
		if (n < 0 && errno != EINTR)
			return -errno;
		for (int k = 0; n > 0 && k < 2; k++) {
			char chunk[4096];
			ssize_t got;

			if (pfd[k].fd < 0 || !pfd[k].revents)
				continue;
			got = read(pfd[k].fd, chunk, sizeof(chunk));
			if (got > 0 && (got_total[k] += (size_t)got) > FRR_OUTPUT_MAX)
				return -EFBIG;
			if (got > 0 && ms[k])
				fwrite(chunk, 1, (size_t)got, ms[k]);
			if (got == 0 || (got < 0 && errno != EINTR && errno != EAGAIN)) {
				pfd[k].fd = -1;
				open_fds--;
			}
		}
	}
	return 0;
}

/*
 * Runs argv (posix_spawn, no shell), its stdout into *out when out is given,
 * its stderr into *err_text when given. The exit status, or -errno
 * (-ETIMEDOUT: killed after timeout_ms).
 */
static int run(char *const argv[], char **out, char **err_text, int timeout_ms)
{
	posix_spawn_file_actions_t fa;
	int outp[2] = {-1, -1}, errp[2] = {-1, -1}, fds[2], status, ret;
	char *bufs[2] = {NULL, NULL};
	size_t lens[2] = {0, 0};
	FILE *ms[2] = {NULL, NULL};
	pid_t pid;

	if (pipe2(outp, O_CLOEXEC) < 0 || pipe2(errp, O_CLOEXEC) < 0) {
		ret = -errno;
		goto close;
	}
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, outp[1], 1);
	posix_spawn_file_actions_adddup2(&fa, errp[1], 2);
	/* not our netlink sockets (libnftables' lack close-on-exec) nor anything else */
	posix_spawn_file_actions_addclosefrom_np(&fa, 3);
	ret = posix_spawn(&pid, argv[0], &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(outp[1]);
	close(errp[1]);
	outp[1] = errp[1] = -1;
	if (ret) {
		ret = -ret;
		goto close;
	}
	ms[0] = open_memstream(&bufs[0], &lens[0]);
	ms[1] = open_memstream(&bufs[1], &lens[1]);
	fds[0] = outp[0];
	fds[1] = errp[0];
	ret = collect(fds, ms, timeout_ms);
	if (ret < 0)
		kill(pid, SIGKILL);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (!ret)
		ret = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
close:
	for (int k = 0; k < 2; k++) {
		if (ms[k])
			fclose(ms[k]);
		if (outp[k] >= 0)
			close(outp[k]);
		if (errp[k] >= 0)
			close(errp[k]);
	}
	if (out)
		*out = bufs[0];
	else
		free(bufs[0]);
	if (err_text)
		*err_text = bufs[1];
	else
		free(bufs[1]);
	return ret;
}

/*
 * A pathspace's frr.conf, in its directory as opened without following a
 * link: the frr user owns /etc/frr, and could put a link to a directory of
 * root's (/etc/modprobe.d, say) in the place of the pathspace's directory
 * while frr-reload.py runs, and fabricd would write its frr.conf there.
 * -ENOTDIR for a link (or a file) there, 1 when frr.conf itself is a link
 * (for write_file_atomic's rules), 0 or -errno.
 */
static int write_in_pathspace(const char *pathspace, const char *text)
{
	int top = open(FRR_CONF_DIR, O_RDONLY | O_DIRECTORY | O_CLOEXEC), dir, ret;
	struct stat st;

	if (top < 0)
		return -errno;
	dir = openat(top, pathspace, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	ret = dir < 0 ? -errno : 0;
	close(top);
	if (ret < 0)
		return ret;
	if (fstatat(dir, "frr.conf", &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode))
		ret = 1;
	else
		ret = write_file_atomic_at(dir, "frr.conf", text, strlen(text), 0640, true);
	close(dir);
	return ret;
}

/*
 * frr.conf replaced in one rename, with the mode and owner of the file it
 * replaces; never through a link the frr user (who owns /etc/frr) made.
 * Said here, naming the file and what to do; 0 or -errno.
 */
static int write_conf(const char *pathspace, const char *path, const char *text)
{
	int ret = pathspace ? write_in_pathspace(pathspace, text) : 1;

	if (ret == 1)
		ret = write_file_atomic(path, text, strlen(text), 0640, true);
	if (ret == -EPERM && link_of_another_user(path))
		log_error("frr: cannot write %s: " FOREIGN_LINK_HINT, path);
	else if (ret == -ENOTDIR)
		log_error("frr: cannot write %s: " FRR_CONF_DIR "/%s is not a directory (a "
			  "symbolic link, say): the frr user owns " FRR_CONF_DIR " and could put "
			  "one to a directory of root's there, so fabricd writes only into a "
			  "directory; make " FRR_CONF_DIR "/%s one (FRR's -N %s)",
			  path, pathspace, pathspace, pathspace);
	else if (ret < 0)
		log_error("frr: cannot write %s: %s", path, strerror(-ret));
	return ret;
}

/* frr-reload.py colours its log ("\033[91m  ERROR\033[0m"): the journal gets the text only. */
static void strip_colours(char *text)
{
	char *out = text;

	for (const char *p = text; *p;) {
		if (p[0] == '\033' && p[1] == '[') {
			p += 2;
			while (*p && !((*p >= '@' && *p <= '~')))
				p++; /* parameters, up to the final byte */
			if (*p)
				p++;
			continue;
		}
		*out++ = *p++;
	}
	*out = '\0';
}

static int reload(const char *pathspace, const char *path)
{
	char *argv[8], *err = NULL, *tail;
	int n = 0, ret;

	argv[n++] = (char *)"/usr/bin/python3";
	argv[n++] = (char *)FRR_RELOAD;
	argv[n++] = (char *)"--reload";
	argv[n++] = (char *)"--stdout";
	if (pathspace) {
		argv[n++] = (char *)"--pathspace";
		argv[n++] = (char *)pathspace;
	}
	argv[n++] = (char *)path;
	argv[n] = NULL;
	ret = run(argv, NULL, &err, FRR_RUN_TIMEOUT_MS);
	/* its log goes to stderr (--stdout); the end of it says what failed */
	if (err)
		strip_colours(err);
	tail = err && strlen(err) > 800 ? err + strlen(err) - 800 : err;
	if (ret == -ETIMEDOUT)
		log_error("frr: " FRR_RELOAD " %s did not finish in %d s and was killed; is FRR "
			  "hanging?",
			  path, FRR_RUN_TIMEOUT_MS / 1000);
	else if (ret < 0)
		log_error("frr: cannot run " FRR_RELOAD ": %s (install frr-pythontools)",
			  strerror(-ret));
	else if (ret)
		log_error("frr: " FRR_RELOAD " %s failed (exit %d): %s%s", path, ret,
			  tail != err ? "..." : "", tail && *tail ? tail : "no message");
	free(err);
	return ret < 0 ? ret : ret ? -EIO : 0;
}

int frr_write_and_reload(const char *pathspace, const char *owner, const char *block)
{
	char path[PATH_MAX], why[512], line[128];
	struct frr_obs o;
	char *text = NULL;
	bool running = frr_running(pathspace, why, sizeof(why));
	int ret;

	/* removing needs no FRR: the file is what it reads when it starts */
	if (!running && block) {
		log_error("frr: %s", why);
		return -ESRCH;
	}
	frr_conf_path(pathspace, path, sizeof(path));
	ret = frr_observe(pathspace, owner, &o);
	if (ret < 0 || o.read_error) {
		ret = ret < 0 ? ret : -o.read_error;
		log_error("frr: cannot read %s: %s", path, frr_read_why(-ret, why, sizeof(why)));
		goto out;
	}
	if (block && frr_foreign_bgp(o.conf, owner, line, sizeof(line))) {
		log_error("frr: %s already has \"%s\" outside fabricd's part; FRR allows one "
			  "default-VRF BGP instance: remove it, or move it into a VRF",
			  path, line);
		ret = -EEXIST;
		goto out;
	}
	ret = frr_splice(o.conf, owner, block, &text);
	if (ret < 0)
		goto out;
	/* nothing of fabricd's in a file that is not there: nothing for FRR to drop either */
	if (!block && !o.block && access(path, F_OK) < 0 && errno == ENOENT)
		goto out;
	pending_mark(pathspace, (long)getpid());
	/* frr-reload.py refuses an empty file; a lone comment removes everything it held */
	ret = write_conf(pathspace, path, *text ? text : "!\n");
	if (ret < 0)
		goto out;
	if (!running) {
		log_warn("frr: not running: fabricd's part removed from %s only", path);
		goto out;
	}
	ret = reload(pathspace, path);
	if (ret < 0)
		running_forget();
	else
		running_loaded(pathspace, block);
	/*
	 * A failed reload: the file as it was, so that it still says what FRR
	 * runs (as far as fabricd knows) and the next plan finds the change
	 * again and retries it, rather than "nothing to change" from a file FRR
	 * never took.
	 */
	if (ret < 0 && write_conf(pathspace, path, *o.conf ? o.conf : "!\n") == 0)
		log_error("frr: %s is back as it was; fix what failed, then %s again", path,
			  block ? "apply" : "run down");
	/*
	 * frr-reload.py (8.4) takes a file other than /etc/frr/frr.conf for a
	 * copy to persist and runs vtysh `write`, which replaces a pathspace's
	 * frr.conf with the running config and drops fabricd's markers: put the
	 * file back as written (its content is what FRR now runs).
	 */
	if (!ret && pathspace)
		ret = write_conf(pathspace, path, *text ? text : "!\n");
out:
	pending_done(pathspace, ret < 0 && o.reload_cut_short);
	free(text);
	frr_obs_free(&o);
	return ret;
}

/* Whether p writes fabricd's part (and so needs FRR running); why it cannot, in why. */
static bool plan_blocked(const char *pathspace, const struct plan *p, char *why, size_t len)
{
	for (size_t i = 0; i < p->n; i++) {
		if (p->ops[i].type == OP_FRR_CONFIG && p->ops[i].text)
			return !frr_running(pathspace, why, len);
	}
	return false;
}

int frr_check_plan(const char *pathspace, const struct plan *p)
{
	char why[512];

	if (!plan_blocked(pathspace, p, why, sizeof(why)))
		return 0;
	log_error("frr: %s; nothing was changed", why);
	return -ENOTCONN;
}

void frr_warn_plan(const char *pathspace, const struct plan *p, struct diag *diag)
{
	char why[512];

	if (plan_blocked(pathspace, p, why, sizeof(why)))
		diag_warn(diag, "frr", "%s; apply will refuse until it runs", why);
}

json_t *frr_show_json_within(const char *pathspace, const char *cmd, int timeout_ms, int *ret)
{
	char *argv[8], *out = NULL, *err = NULL;
	json_error_t jerr;
	json_t *j = NULL;
	int n = 0;

	argv[n++] = (char *)VTYSH;
	if (pathspace) {
		argv[n++] = (char *)"-N";
		argv[n++] = (char *)pathspace;
	}
	argv[n++] = (char *)"-c";
	argv[n++] = (char *)cmd;
	argv[n] = NULL;
	*ret = run(argv, &out, &err, timeout_ms);
	if (*ret == 0 && out)
		j = json_loads(out, 0, &jerr);
	if (!j)
		log_debug("frr: vtysh -c '%s': exit %d, %s", cmd, *ret, err ? err : "");
	free(out);
	free(err);
	return j;
}

/* status: a person waits, FRR busy with a large table still answers within it */
#define FRR_SHOW_TIMEOUT_MS 10000

int frr_show_json(const char *pathspace, const char *cmd, json_t **out, char *why, size_t len)
{
	int ret;

	*out = frr_show_json_within(pathspace, cmd, FRR_SHOW_TIMEOUT_MS, &ret);
	if (*out)
		return 0;
	if (ret == -ETIMEDOUT) {
		snprintf(why, len,
			 "vtysh -c '%s' did not answer within %d s (is a bgpd or zebra stopped or "
			 "stuck?): see `systemctl status frr` and FRR's log",
			 cmd, FRR_SHOW_TIMEOUT_MS / 1000);
		return ret;
	}
	if (ret == -EFBIG) {
		snprintf(why, len,
			 "vtysh -c '%s' answered more than %u MiB, more than fabricd reads; its "
			 "tables are larger than fabricd was made for: read them with vtysh",
			 cmd, FRR_OUTPUT_MAX >> 20);
		return -EIO;
	}
	snprintf(why, len,
		 "vtysh -c '%s' gave no JSON (%s %d): see `systemctl status frr` and FRR's log",
		 cmd, ret < 0 ? "error" : "exit status", ret < 0 ? -ret : ret);
	return -EIO;
}

json_t *frr_vni_remote_vteps(json_t *vni)
{
	json_t *list = json_object_get(vni, "remoteVteps");

	/* FRR 8.4 lists the remote VTEPs under "numRemoteVteps", later releases count them there */
	return json_is_array(list) ? list : json_object_get(vni, "numRemoteVteps");
}

const char *frr_vtep_address(json_t *item)
{
	/* FRR 8.4: the address; later releases: an object with it under "ip" */
	return json_string_value(json_is_string(item) ? item : json_object_get(item, "ip"));
}
