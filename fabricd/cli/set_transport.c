// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * set_transport.c - `fabricd set-transport -c FILE ZONE plain|secure`:
 * switch a zone's transport without editing JSON by hand.
 *
 * The definition is validated, the one value "zones[i].transport" is
 * replaced in the text (every other byte stays as the operator wrote it, so
 * a diff of the file shows one line), the result is validated again, written
 * to a temporary file next to the target with the target's owner and mode,
 * flushed, and renamed over the target; the directory is flushed too. A
 * reader (a running `fabricd run`, a cluster file system) sees the old file
 * or the new one, never a part of either.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/util.h"
#include "engine/session.h"
#include "cli/commands.h"
#include "definition/config.h"
#include "base/diag.h"
#include "base/log.h"
#include "engine/lock.h"

#define DEF_MAX (16 << 20) /* far above any cluster definition */

/*
 * A minimal JSON scanner over text that config_load_buffer() has accepted:
 * it only finds where values start and end.
 */
struct scan {
	const char *p, *end;
	int depth;
};

static void skip_ws(struct scan *s)
{
	while (s->p < s->end && (*s->p == ' ' || *s->p == '\t' || *s->p == '\n' || *s->p == '\r'))
		s->p++;
}

/* A string at s->p; its span, quotes included, in *start / *len. */
static bool scan_string(struct scan *s, const char **start, size_t *len)
{
	const char *b = s->p;

	if (s->p >= s->end || *s->p != '"')
		return false;
	for (s->p++; s->p < s->end && *s->p != '"'; s->p++) {
		if (*s->p == '\\')
			s->p++;
	}
	if (s->p >= s->end)
		return false;
	s->p++;
	*start = b;
	*len = (size_t)(s->p - b);
	return true;
}

static bool scan_value(struct scan *s);

/* Calls each(key, klen) with s->p at the member's value, which each() must consume. */
static bool scan_object(struct scan *s, bool (*each)(struct scan *, const char *, size_t, void *),
			void *data)
{
	const char *key;
	size_t klen;

	if (s->p >= s->end || *s->p != '{' || ++s->depth > 64)
		return false;
	s->p++;
	skip_ws(s);
	if (s->p < s->end && *s->p == '}') {
		s->p++;
		s->depth--;
		return true;
	}
	for (;;) {
		skip_ws(s);
		if (!scan_string(s, &key, &klen))
			return false;
		skip_ws(s);
		if (s->p >= s->end || *s->p++ != ':')
			return false;
		skip_ws(s);
		if (!(each ? each(s, key, klen, data) : scan_value(s)))
			return false;
		skip_ws(s);
		if (s->p < s->end && *s->p == ',') {
			s->p++;
			continue;
		}
		if (s->p < s->end && *s->p == '}') {
			s->p++;
			s->depth--;
			return true;
		}
		return false;
	}
}

static bool scan_array(struct scan *s, bool (*each)(struct scan *, void *), void *data)
{
	if (s->p >= s->end || *s->p != '[' || ++s->depth > 64)
		return false;
	s->p++;
	skip_ws(s);
	if (s->p < s->end && *s->p == ']') {
		s->p++;
		s->depth--;
		return true;
	}
	for (;;) {
		skip_ws(s);
		if (!(each ? each(s, data) : scan_value(s)))
			return false;
		skip_ws(s);
		if (s->p < s->end && *s->p == ',') {
			s->p++;
			continue;
		}
		if (s->p < s->end && *s->p == ']') {
			s->p++;
			s->depth--;
			return true;
		}
		return false;
	}
}

static bool scan_value(struct scan *s)
{
	const char *b;
	size_t n;

	if (s->p >= s->end)
		return false;
	switch (*s->p) {
	case '{':
		return scan_object(s, NULL, NULL);
	case '[':
		return scan_array(s, NULL, NULL);
	case '"':
		return scan_string(s, &b, &n);
	default:
		/* number, true, false, null */
		while (s->p < s->end && !strchr(",]} \t\r\n", *s->p))
			s->p++;
		return true;
	}
}

/* What the scan looks for and finds. */
struct find {
	const char *zone;
	int zones_seen;	   /* "zones" keys at the top */
	int matches;	   /* zones named zone */
	const char *value; /* the span of that zone's "transport" value */
	size_t value_len;
	/* per zone element */
	const char *name, *transport;
	size_t name_len, transport_len;
	int transports;
};

static bool key_is(const char *key, size_t len, const char *want)
{
	return len == strlen(want) + 2 && !memcmp(key + 1, want, len - 2);
}

static bool zone_member(struct scan *s, const char *key, size_t klen, void *data)
{
	struct find *f = data;

	if (key_is(key, klen, "name") && *s->p == '"')
		return scan_string(s, &f->name, &f->name_len);
	if (key_is(key, klen, "transport") && *s->p == '"') {
		f->transports++;
		return scan_string(s, &f->transport, &f->transport_len);
	}
	return scan_value(s);
}

static bool zone_element(struct scan *s, void *data)
{
	struct find *f = data;

	f->name = f->transport = NULL;
	f->transports = 0;
	if (*s->p != '{')
		return scan_value(s);
	if (!scan_object(s, zone_member, f))
		return false;
	if (f->name && key_is(f->name, f->name_len, f->zone)) {
		f->matches++;
		if (f->transports == 1) {
			f->value = f->transport;
			f->value_len = f->transport_len;
		}
	}
	return true;
}

static bool top_member(struct scan *s, const char *key, size_t klen, void *data)
{
	struct find *f = data;

	if (key_is(key, klen, "zones") && *s->p == '[') {
		f->zones_seen++;
		return scan_array(s, zone_element, f);
	}
	return scan_value(s);
}

static int read_file(const char *path, char **buf, size_t *len, struct stat *st)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t used = 0;
	int ret = 0;

	*buf = NULL;
	if (fd < 0)
		return -errno;
	if (fstat(fd, st) < 0) {
		ret = -errno;
		goto out;
	}
	if (!S_ISREG(st->st_mode) || st->st_size > DEF_MAX) {
		ret = S_ISREG(st->st_mode) ? -EFBIG : S_ISDIR(st->st_mode) ? -EISDIR : -EINVAL;
		goto out;
	}
	*buf = malloc((size_t)st->st_size + 1);
	if (!*buf) {
		ret = -ENOMEM;
		goto out;
	}
	while (used < (size_t)st->st_size) {
		ssize_t n = read(fd, *buf + used, (size_t)st->st_size - used);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			ret = n < 0 ? -errno : -EIO;
			goto out;
		}
		used += (size_t)n;
	}
	(*buf)[used] = '\0';
	*len = used;
out:
	close(fd);
	if (ret < 0) {
		free(*buf);
		*buf = NULL;
	}
	return ret;
}

/*
 * Validates text, the file as it is (edit NULL) or as the switch to edit
 * would make it; prints every problem. The zone's transport after loading
 * (and its MTU policy in *policy), or -1.
 */
static int check_text(const char *text, size_t len, const char *zone, const char *what,
		      const char *edit, enum mtu_policy *policy)
{
	struct cluster *c = NULL;
	struct diag diag;
	int transport = -2;

	diag_init(&diag);
	if (config_load_buffer(text, len, &c, &diag) < 0) {
		diag_print(&diag, stderr);
		if (edit)
			log_error("zone %s: %s transport would make %s invalid (the errors "
				  "above): nothing was changed; fix that first",
				  zone, edit, what);
		else
			log_error("%s is not a valid definition: nothing was changed; fix it "
				  "first (fabricd check -c %s)",
				  what, what);
		transport = -1;
	}
	for (size_t i = 0; c && i < c->n_zones; i++) {
		if (!strcmp(c->zones[i].name, zone)) {
			transport = (int)c->zones[i].transport;
			*policy = c->zones[i].mtu_policy;
		}
	}
	if (transport == -2) {
		log_error("zone \"%s\" is not in %s: nothing was changed; use one of its zones:",
			  zone, what);
		for (size_t i = 0; c && i < c->n_zones; i++)
			fprintf(stderr, "  %s\n", c->zones[i].name);
		transport = -1;
	}
	cluster_free(c);
	diag_free(&diag);
	return transport;
}

/* Writes text next to path and renames it over path; the target must still be st. */
static int replace_file(const char *path, const char *text, size_t len, const struct stat *st)
{
	char tmp[PATH_MAX + 32], dir[PATH_MAX];
	struct stat now;
	int fd, dfd, ret = 0;

	snprintf(tmp, sizeof(tmp), "%s.tmp.%d", path, (int)getpid());
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0) {
		ret = -errno;
		log_error("%s: cannot create it: %s; nothing was changed (is the directory "
			  "writable?)",
			  tmp, strerror(-ret));
		return ret;
	}
	/* the owner first: fchown may clear set-id bits that the mode then restores */
	if ((fchown(fd, st->st_uid, st->st_gid) < 0 && errno != EPERM) ||
	    fchmod(fd, st->st_mode & 07777) < 0 || (ret = write_all(fd, text, len)) < 0 ||
	    fsync(fd) < 0) {
		ret = ret ? ret : -errno;
		log_error("%s: cannot write it: %s; nothing was changed", tmp, strerror(-ret));
		close(fd);
		unlink(tmp);
		return ret;
	}
	close(fd);
	if (stat(path, &now) < 0 || now.st_ino != st->st_ino ||
	    now.st_mtim.tv_sec != st->st_mtim.tv_sec ||
	    now.st_mtim.tv_nsec != st->st_mtim.tv_nsec || now.st_size != st->st_size) {
		log_error("%s: changed while it was being edited; nothing was changed, run the "
			  "command again",
			  path);
		unlink(tmp);
		return -EAGAIN;
	}
	if (rename(tmp, path) < 0) {
		ret = -errno;
		log_error("%s: cannot replace it: %s; nothing was changed", path, strerror(-ret));
		unlink(tmp);
		return ret;
	}
	snprintf(dir, sizeof(dir), "%s", path);
	dfd = open(dirname(dir), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd >= 0) {
		fsync(dfd); /* the rename itself survives a crash */
		close(dfd);
	}
	return 0;
}

/*
 * The node lock: this network namespace's (engine/lock.h). The node's name
 * only names it in messages: -n when given (checked), else this host's name,
 * whatever it is, as set-transport edits the definition and never reads the
 * node's part of it.
 */
static int lock_this_node(struct node_lock *lock, const struct options *o)
{
	char host[256] = "";
	const char *node =
	    o->node ? session_node_name(o, host, sizeof(host)) : host_node_name(host, sizeof(host));

	if (o->node && !node)
		return -1;
	return node_lock_take(lock, node ? node : "this node", "set-transport",
			      o->lock_wait * 1000U, false);
}

static void print_switched(const struct options *o, const char *zone, enum transport have,
			   const char *mode, enum mtu_policy policy)
{
	printf("zone %s: transport %s -> %s in %s\n", zone, transport_name(have), mode, o->config);
	printf("nodes running `fabricd run` on this file switch on their own; others need "
	       "`fabricd apply`\n");
	if (policy == MTU_POLICY_MAX)
		printf("zone %s has mtu_policy max: its MTU changes with the transport, and "
		       "guests must follow it (secure is the smaller one)\n",
		       zone);
}

int cmd_set_transport(const struct options *o)
{
	char *text = NULL, *out = NULL, path[PATH_MAX];
	struct find f = {0};
	struct scan s;
	const char *zone, *mode;
	size_t len = 0, out_len;
	struct stat st;
	enum mtu_policy policy = MTU_POLICY_STABLE;
	struct node_lock lock = {.fd = -1};
	int want, have, have_now, ret = 1;

	if (o->argc != 2) {
		log_error("usage: fabricd set-transport -c FILE ZONE plain|secure");
		return 1;
	}
	zone = o->argv[0];
	mode = o->argv[1];
	if (strcmp(mode, "plain") && strcmp(mode, "secure")) {
		log_error("transport \"%s\": use plain or secure", mode);
		return 1;
	}
	want = !strcmp(mode, "secure") ? TRANSPORT_SECURE : TRANSPORT_PLAIN;
	/* a symlink stays one: the file it points to is replaced */
	if (!realpath(o->config, path)) {
		log_error("%s: %s; give the definition with -c FILE", o->config, strerror(errno));
		return 1;
	}
	/* two edits at once would each write the file the other did not see */
	if (lock_this_node(&lock, o) < 0)
		return 1;
	if ((errno = -read_file(path, &text, &len, &st)) != 0) {
		log_error("%s: cannot read it: %s; give the definition file with -c FILE", path,
			  strerror(errno));
		node_lock_release(&lock);
		return 1;
	}
	have = check_text(text, len, zone, o->config, NULL, &policy);
	if (have < 0)
		goto out;
	if (have == want) {
		printf("zone %s: already %s in %s; nothing to change\n", zone, mode, o->config);
		ret = 0;
		goto out;
	}
	f.zone = zone;
	s = (struct scan){.p = text, .end = text + len};
	skip_ws(&s);
	if (!scan_object(&s, top_member, &f) || f.zones_seen != 1 || f.matches != 1 || !f.value) {
		log_error("zone %s: its \"transport\" could not be located in %s (written in an "
			  "unusual way?); nothing was changed: edit the file by hand",
			  zone, o->config);
		goto out;
	}
	out_len = len - f.value_len + strlen(mode) + 2;
	out = malloc(out_len + 1);
	if (!out) {
		log_error("out of memory");
		goto out;
	}
	snprintf(out, out_len + 1, "%.*s\"%s\"%s", (int)(f.value - text), text, mode,
		 f.value + f.value_len);
	have_now = check_text(out, out_len, zone, o->config, mode, &policy);
	if (have_now != want) {
		if (have_now >= 0)
			log_error("zone %s: the edit did not come out as expected; nothing was "
				  "changed: edit %s by hand",
				  zone, o->config);
		goto out;
	}
	if (replace_file(path, out, out_len, &st) < 0)
		goto out;
	print_switched(o, zone, (enum transport)have, mode, policy);
	ret = 0;
out:
	free(text);
	free(out);
	node_lock_release(&lock);
	return ret;
}
