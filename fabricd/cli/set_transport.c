// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * set_transport.c - `fabricd set-transport -c FILE ZONE plain|secure`:
 * switch a zone's transport without editing JSON by hand.
 *
 * Under the definition's lock (engine/deffile.c, as join and zone take
 * it), the definition is validated, the one value "zones[i].transport" is
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
#include "cli/commands.h"
#include "definition/config.h"
#include "base/diag.h"
#include "base/log.h"
#include "engine/deffile.h"
#include "engine/session.h"

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
	/* the file's syntax by its name (config_load_buffer only knows the text) */
	if ((!edit && config_json_check(text, len, what, NULL, &diag) < 0) ||
	    config_load_buffer(text, len, &c, &diag) < 0) {
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

/*
 * The switch on the definition's text: *out the edited text (0), or nothing
 * to change (1), or -1 after the error messages.
 */
static int edit_text(const struct options *o, const char *text, size_t len, const char *zone,
		     const char *mode, int *have, enum mtu_policy *policy, char **out,
		     size_t *out_len)
{
	int want = !strcmp(mode, "secure") ? TRANSPORT_SECURE : TRANSPORT_PLAIN;
	struct find f = {.zone = zone};
	struct scan s = {.p = text, .end = text + len};
	int have_now;

	*out = NULL;
	*have = check_text(text, len, zone, o->config, NULL, policy);
	if (*have < 0)
		return -1;
	if (*have == want)
		return 1;
	skip_ws(&s);
	if (!scan_object(&s, top_member, &f) || f.zones_seen != 1 || f.matches != 1 || !f.value) {
		log_error("zone %s: its \"transport\" could not be located in %s (written in an "
			  "unusual way?); nothing was changed: edit the file by hand",
			  zone, o->config);
		return -1;
	}
	*out_len = len - f.value_len + strlen(mode) + 2;
	*out = malloc(*out_len + 1);
	if (!*out) {
		log_error("out of memory");
		return -1;
	}
	snprintf(*out, *out_len + 1, "%.*s\"%s\"%s", (int)(f.value - text), text, mode,
		 f.value + f.value_len);
	have_now = check_text(*out, *out_len, zone, o->config, mode, policy);
	if (have_now == want)
		return 0;
	if (have_now >= 0)
		log_error("zone %s: the edit did not come out as expected; nothing was changed: "
			  "edit %s by hand",
			  zone, o->config);
	free(*out);
	*out = NULL;
	return -1;
}

/* A definition that can be edited: a regular file (checked before its lock is made). */
static int check_target(const char *config)
{
	char path[PATH_MAX];
	struct stat st;

	/* a symlink stays one: the file it points to is replaced */
	if (!realpath(config, path) || stat(path, &st) < 0) {
		log_error("%s: %s; give the definition with -c FILE", config, strerror(errno));
		return -1;
	}
	if (!S_ISREG(st.st_mode)) {
		log_error("%s: cannot read it: %s; give the definition file with -c FILE", config,
			  strerror(S_ISDIR(st.st_mode) ? EISDIR : EINVAL));
		return -1;
	}
	return 0;
}

int cmd_set_transport(const struct options *o)
{
	char err[2 * PATH_MAX + 256], host[256], *out = NULL;
	const char *zone, *mode;
	enum mtu_policy policy = MTU_POLICY_STABLE;
	struct deffile df;
	size_t out_len = 0;
	int have = -1, ret = 1, edit, tries = 0;

	if (o->argc != 2) {
		/* what is wrong, then the usage (it was the usage line alone) */
		if (o->argc > 2)
			log_error("set-transport: unexpected argument \"%s\": it takes a zone and "
				  "its transport; usage: fabricd set-transport -c FILE ZONE "
				  "plain|secure",
				  o->argv[2]);
		else
			log_error("set-transport: %s; usage: fabricd set-transport -c FILE ZONE "
				  "plain|secure",
				  o->argc
				      ? "the transport is missing: give plain or secure after the "
					"zone"
				      : "give the zone and its transport (plain or secure)");
		return 1;
	}
	zone = o->argv[0];
	mode = o->argv[1];
	if (strcmp(mode, "plain") && strcmp(mode, "secure")) {
		log_error("transport \"%s\": use plain or secure", mode);
		return 1;
	}
	/* -n names no node here (the edit is every node's), but a bad one is still refused */
	if (o->node && !session_node_name(o, host, sizeof(host)))
		return 1;
	if (check_target(o->config) < 0)
		return 1;
	/* the definition's lock, as join and zone take it: no edit is lost to another */
	if (deffile_open_locked(o->config, o->lock_wait, "set-transport", &df, err, sizeof(err)) <
	    0) {
		log_error("%s", err);
		return 1;
	}
	for (;;) {
		if (!df.exists) {
			log_error("%s: it is gone; give the definition with -c FILE", o->config);
			edit = -1;
			break;
		}
		edit = edit_text(o, df.text, df.len, zone, mode, &have, &policy, &out, &out_len);
		if (edit != 0)
			break;
		edit = deffile_replace(&df, out, out_len, err, sizeof(err));
		free(out);
		out = NULL;
		/* an editor that ignored the lock changed the file: redo the edit on its content */
		if (edit == -EAGAIN && ++tries < 10 && deffile_reread(&df, err, sizeof(err)) == 0)
			continue;
		if (edit < 0)
			log_error("%s", err);
		break;
	}
	if (edit == 1)
		printf("zone %s: already %s in %s; nothing to change\n", zone, mode, o->config);
	else if (edit == 0)
		print_switched(o, zone, (enum transport)have, mode, policy);
	ret = edit < 0;
	deffile_close(&df);
	return ret;
}
