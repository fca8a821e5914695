// SPDX-License-Identifier: GPL-2.0-or-later
/* daemon/source.c - the definition file, or Proxmox's deployed SDN configuration (source.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/log.h"
#include "base/util.h"
#include "daemon/source.h"
#include "definition/config.h"
#include "definition/pve_follow.h"

void def_source_init(struct def_source *s, const struct options *o)
{
	memset(s, 0, sizeof(*s));
	if (!o->sdn_dir) {
		s->n = 1;
		s->files[0] = o->config;
		s->fix = "fix these problems and save it again";
		return;
	}
	s->pve = true;
	s->corosync_opt = o->corosync;
	snprintf(s->running, sizeof(s->running), "%s/.running-config", o->sdn_dir);
	pve_paths_init(&s->paths, o->sdn_dir, o->corosync, s->corosync, sizeof(s->corosync));
	s->n = 2;
	s->files[0] = s->running;
	s->files[1] = s->paths.corosync;
	s->fix = "fix these problems in Proxmox (Datacenter > SDN) and Apply again";
}

/*
 * The daemon follows a file: a FIFO (or a pipe, -c <(...)) would block its
 * read, and with it every pass and its signals, until something writes.
 */
static int regular_file(const char *path, struct diag *diag)
{
	struct stat st;

	if (stat(path, &st) < 0 || S_ISREG(st.st_mode))
		return 0; /* the load says what is wrong with a file it cannot open */
	diag_add(diag, path,
		 "not a regular file (a %s): fabricd run follows a file, written in place or "
		 "renamed over; give it one with -c",
		 S_ISFIFO(st.st_mode)  ? "FIFO or pipe"
		 : S_ISDIR(st.st_mode) ? "directory"
				       : "device or socket");
	return -EINVAL;
}

/*
 * The definition file; where its zones follow Proxmox Simple zones, their
 * vnets from .running-config, which is then read, watched and checked as a
 * second file (its path comes from the definition).
 */
static int load_definition(struct def_source *s, struct cluster **out, struct diag *diag)
{
	char path[PATH_MAX];
	int ret = regular_file(s->files[0], diag);

	*out = NULL;
	if (ret < 0)
		return ret;
	ret = config_load_file(s->files[0], out, diag);

	if (ret < 0)
		return ret; /* a file still followed stays followed */
	if (!pve_follows(*out)) {
		s->n = 1;
		s->fix = "fix these problems and save it again";
		return 0;
	}
	s->fix = "fix these problems in the definition, or in Proxmox (Datacenter > SDN) and "
		 "Apply again";
	pve_follow_path(*out, path, sizeof(path));
	if (s->n == 1 || strcmp(path, s->running)) {
		snprintf(s->running, sizeof(s->running), "%s", path);
		s->files[1] = s->running;
		s->n = 2;
		log_info("%s: the zones with \"pve_zone\" follow Proxmox's %s", s->files[0],
			 s->running);
		if (s->watch && s->watch->fd >= 0 && file_watch_add(s->watch, s->running) < 0)
			log_warn("%s: too many files to watch; changes are noticed by the "
				 "periodic check",
				 s->running);
	}
	file_id_read(s->files[1], &s->ids[1]);
	ret = pve_follow_load(*out, diag);
	if (ret < 0) {
		cluster_free(*out);
		*out = NULL;
	}
	return ret;
}

int def_source_load(struct def_source *s, struct cluster **out, struct diag *diag)
{
	/* Proxmox's fabric has no keepalive by default and gives fabricd no MTU: as import-pve */
	static const struct pve_import_opts opts = {.measured = true}; /* the node measures */

	if (!s->pve) {
		file_id_read(s->files[0], &s->ids[0]);
		return load_definition(s, out, diag);
	}
	for (size_t i = 0; i < s->n; i++)
		file_id_read(s->files[i], &s->ids[i]);
	return pve_load_cluster(&s->paths, &opts, out, diag);
}

bool def_source_changed(struct def_source *s)
{
	bool changed = false;

	for (size_t i = 0; i < s->n; i++) {
		struct file_id id;

		file_id_read(s->files[i], &id);
		if (file_id_changed(&id, &s->ids[i])) {
			s->ids[i] = id;
			changed = true;
		}
	}
	return changed;
}

int def_source_watch(struct def_source *s, struct file_watch *w)
{
	int ret = file_watch_open(w, s->files[0]);

	s->watch = w;

	for (size_t i = 1; ret == 0 && i < s->n; i++)
		ret = file_watch_add(w, s->files[i]);
	return ret;
}

/*
 * Proxmox's files are read again on every SDN "Apply", with the same notes
 * about what stays Proxmox's each time: each is printed once while it lasts
 * (and again when it comes back). A definition file's warnings are printed
 * on each reload.
 */
static struct diag_said *said_of(struct def_source *s)
{
	return s->pve ? &s->said : NULL;
}

/*
 * The error and its list of problems in one write: a reader of the log who
 * finds the first line finds the problems with it.
 */
static void log_rejected(const char *path, const char *fix, const struct diag *diag, int err)
{
	bool block = log_capture_begin() == 0;
	char *text;

	if (diag->n)
		log_error("%s: not used, the last good definition stays in force; %s:", path, fix);
	else
		log_error("%s: cannot read it: %s; the last good definition stays in force", path,
			  strerror(-err));
	diag_print(diag, log_stream());
	if (!block)
		return;
	text = log_capture_end();
	if (text)
		fputs(text, stderr);
	free(text);
}

/*
 * The options that give a one-shot command this source, for the advice in
 * messages: on Proxmox there is no definition file to name.
 */
static void source_args(const struct def_source *s, char *buf, size_t len)
{
	if (!s->pve)
		snprintf(buf, len, "-c %s", s->files[0]);
	else if (s->corosync_opt)
		snprintf(buf, len, "--sdn-dir %s --corosync %s", s->paths.sdn_dir, s->corosync_opt);
	else
		snprintf(buf, len, "--sdn-dir %s", s->paths.sdn_dir);
}

/* What the daemon cannot take from a valid definition: it names this node and this cluster. */
static int check_in_force(const struct def_source *s, const struct cluster *c, const char *node,
			  const char *cluster_name, struct diag *diag)
{
	char args[2 * PATH_MAX + 32];

	if (cluster_find_node(c, node) < 0) {
		source_args(s, args, sizeof(args));
		diag_add(diag, "nodes",
			 "this node, %s, is no longer in %s (it left); to take it out "
			 "of the fabric, stop fabricd and run `fabricd down %s`",
			 node, s->pve ? "Proxmox's WireGuard fabric" : "the definition", args);
		return -EINVAL;
	}
	if (strcmp(c->name, cluster_name)) {
		diag_add(diag, "cluster",
			 "the cluster name changed from \"%s\" to \"%s\", which would disown every "
			 "object fabricd made here; stop fabricd, run `fabricd down --cluster %s`, "
			 "then start fabricd again",
			 cluster_name, c->name, cluster_name);
		return -EINVAL;
	}
	return 0;
}

struct cluster *def_source_candidate(struct def_source *s, const char *node,
				     const char *cluster_name, bool forced)
{
	struct cluster *c = NULL;
	struct diag diag;
	uint64_t h;
	int ret;

	diag_init(&diag);
	ret = def_source_load(s, &c, &diag);
	if (ret == 0)
		ret = check_in_force(s, c, node, cluster_name, &diag);
	if (ret < 0) {
		h = digest(DIGEST_INIT, &ret, sizeof(ret));
		for (size_t i = 0; i < diag.n; i++)
			h = digest(h, diag.msgs[i], strlen(diag.msgs[i]));
		if (forced || h != s->rejected)
			log_rejected(s->files[0], s->fix, &diag, ret);
		s->rejected = h;
		cluster_free(c);
		c = NULL;
	} else {
		diag_print_new(&diag, true, said_of(s), stderr);
	}
	diag_free(&diag);
	return c;
}

int def_source_load_first(struct def_source *s, struct cluster **out)
{
	struct diag diag;
	int ret;

	diag_init(&diag);
	ret = def_source_load(s, out, &diag);
	diag_print_new(&diag, true, ret == 0 ? said_of(s) : NULL, stderr);
	diag_free(&diag);
	if (ret < 0)
		log_error("%s: definition not valid, nothing was changed; %s", s->files[0],
			  s->pve ? s->fix : "fix the errors above");
	return ret < 0 ? -1 : 0;
}
