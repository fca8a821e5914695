/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * daemon/source.h - where `fabricd run` takes its definition from.
 *
 * Either the JSON definition file (-c FILE), or, with --sdn-dir DIR,
 * Proxmox VE's deployed SDN configuration: DIR/.running-config (rewritten
 * on every SDN "Apply") and corosync.conf (--corosync, default
 * DIR/../corosync.conf), mapped in memory on every change exactly as
 * `fabricd import-pve` would write the file (definition/pve_load.h). A
 * vnet added, removed or renamed in Proxmox, or a zone switched between
 * `peers` (plain) and the WireGuard `fabric` (secure), is then one more
 * definition change for the daemon's usual path: load, check, reconcile,
 * keep the last good one when anything does not map.
 *
 * With -c FILE whose zones follow Proxmox Simple zones ("pve_zone",
 * definition/pve_follow.h), the definition's pve_sdn_dir/.running-config is
 * the second file: read after the definition, watched and checked as it is.
 */
#ifndef FABRICD_DAEMON_SOURCE_H
#define FABRICD_DAEMON_SOURCE_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

#include "base/diag.h"
#include "daemon/watch.h"
#include "definition/model.h"
#include "definition/pve_load.h"
#include "engine/options.h"

#define DEF_SOURCE_FILES 2

struct def_source {
	bool pve; /* --sdn-dir given */
	struct pve_paths paths;
	char running[PATH_MAX], corosync[PATH_MAX];
	const char *corosync_opt;	      /* --corosync FILE, or NULL */
	size_t n;			      /* files read: 1 (-c) or 2 (Proxmox) */
	const char *files[DEF_SOURCE_FILES];  /* the first names the source in messages */
	struct file_id ids[DEF_SOURCE_FILES]; /* as last read */
	const char *fix;		      /* what the operator does about a bad one */
	struct file_watch *watch;	      /* def_source_watch()'s, NULL before */
	uint64_t rejected;     /* the problems last logged, so that each set is logged once */
	struct diag_said said; /* the warnings last printed (Proxmox: each said once) */
};

/* Sets the source up from the options; the name for messages is s->files[0]. */
void def_source_init(struct def_source *s, const struct options *o);
/*
 * Reads the definition (the files' identities noted first: a change during
 * the read shows next time). 0, or -errno with the problems in diag, each
 * naming file, section and key for Proxmox's files. Warnings go into diag too.
 */
int def_source_load(struct def_source *s, struct cluster **out, struct diag *diag);
/* The definition at startup, every problem printed. 0 or -1. */
int def_source_load_first(struct def_source *s, struct cluster **out);
/*
 * The definition for the daemon's next pass: def_source_load(), then checked
 * against the node and cluster in force. NULL when there is none to use; its
 * problems are then logged, each set of them once (an editor saving the same
 * broken file twice logs it once), and again when forced (SIGHUP).
 */
struct cluster *def_source_candidate(struct def_source *s, const char *node,
				     const char *cluster_name, bool forced);
/* The periodic check (file systems without inotify, such as pmxcfs): changed since the last read?
 */
bool def_source_changed(struct def_source *s);
/*
 * Watches the directory of every file read (w closed before); a file the
 * definition names later (a zone's "pve_zone": .running-config) is added to w
 * when it is first read. 0 or -errno.
 */
int def_source_watch(struct def_source *s, struct file_watch *w);

#endif
