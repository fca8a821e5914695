/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * definition/pve_load.h - Proxmox VE's SDN files read from disk, for
 * `fabricd import-pve` and for `fabricd run --sdn-dir`, which follows
 * Proxmox's deployed configuration instead of a definition file.
 *
 * Read: DIR/.running-config (what the last SDN "Apply" deployed; with
 * pending, the *.cfg files holding edits not applied yet) and corosync.conf.
 * A missing corosync.conf that was not named explicitly is a warning (the
 * nodes then come from the WireGuard fabric). Files only: no DNS, no kernel.
 */
#ifndef FABRICD_PVE_LOAD_H
#define FABRICD_PVE_LOAD_H

#include <stdbool.h>
#include <stddef.h>

#include "base/diag.h"
#include "definition/model.h"
#include "definition/pve_corosync.h"
#include "definition/pve_import.h"
#include "definition/pve_running.h"

#define PVE_DEFAULT_SDN_DIR "/etc/pve/sdn"

struct pve_paths {
	const char *sdn_dir;  /* /etc/pve/sdn */
	const char *corosync; /* /etc/pve/corosync.conf */
	bool corosync_given;  /* named by the user: missing is an error */
	bool pending;	      /* the *.cfg files instead of .running-config */
};

/*
 * The paths for --sdn-dir DIR [--corosync FILE]: without FILE,
 * DIR/../corosync.conf (written into buf), as /etc/pve/sdn and
 * /etc/pve/corosync.conf are on Proxmox. corosync_given: a missing file is an error.
 */
void pve_paths_init(struct pve_paths *p, const char *sdn_dir, const char *corosync, char *buf,
		    size_t len);

/* What pve_files_read() read; in points into it. */
struct pve_files {
	struct pve_running running;
	struct pve_file pending[5];
	struct corosync_conf corosync;
	struct pve_input in;
};

/* The whole file, NUL-terminated (*len without the NUL). -errno; -EFBIG over 16 MiB. */
int pve_read_file(const char *path, char **buf, size_t *len);

/*
 * Reads the SDN files and corosync.conf. Problems go into d, each naming the
 * file (and section and key where there is one). 0; -EINVAL (in d), -ENOENT
 * or another -errno when a file cannot be read (in d too), -ENOMEM.
 */
int pve_files_read(const struct pve_paths *p, struct pve_files *x, struct diag *d);
void pve_files_free(struct pve_files *x);

/*
 * The cluster definition the deployed configuration maps to: the JSON that
 * `fabricd import-pve` writes (without --partial), loaded as `fabricd check`
 * loads a file. Anything that does not map is an error in d and *out stays
 * NULL; warnings (what is knowingly left to Proxmox) are in d too. 0 or
 * -errno (-EINVAL: see d).
 */
int pve_load_cluster(const struct pve_paths *p, const struct pve_import_opts *opts,
		     struct cluster **out, struct diag *d);

#endif
