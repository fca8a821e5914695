// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * definition/pve_load.c - Proxmox's SDN files and corosync.conf from disk,
 * and the cluster definition they map to (see pve_load.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "definition/config.h"
#include "definition/pve_load.h"

#define FILE_MAX (16U << 20) /* Proxmox's files are small; refuse anything absurd */

static int read_fd(int fd, char **buf, size_t *len)
{
	size_t used = 0, cap = 4096;
	int ret = 0;

	*buf = malloc(cap);
	while (*buf) {
		ssize_t n;

		if (used + 1 == cap) {
			char *grown = cap < FILE_MAX ? realloc(*buf, cap * 2) : NULL;

			if (!grown) {
				ret = cap < FILE_MAX ? -ENOMEM : -EFBIG;
				break;
			}
			*buf = grown;
			cap *= 2;
		}
		n = read(fd, *buf + used, cap - 1 - used);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			ret = n < 0 ? -errno : 0;
			break;
		}
		used += (size_t)n;
	}
	if (!*buf)
		return -ENOMEM;
	if (ret < 0) {
		sodium_memzero(*buf, cap); /* wg-keys.cfg is read through here */
		free(*buf);
		*buf = NULL;
		return ret;
	}
	(*buf)[used] = '\0';
	*len = used;
	return 0;
}

int pve_read_file(const char *path, char **buf, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	int ret;

	*buf = NULL;
	if (fd < 0)
		return -errno;
	/* pmxcfs reports sizes, but do not trust st_size for a FUSE file */
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return S_ISDIR(st.st_mode) ? -EISDIR : -EINVAL;
	}
	ret = read_fd(fd, buf, len);
	close(fd);
	return ret;
}

void pve_paths_init(struct pve_paths *p, const char *sdn_dir, const char *corosync, char *buf,
		    size_t len)
{
	size_t n = strlen(sdn_dir);

	memset(p, 0, sizeof(*p));
	p->sdn_dir = sdn_dir;
	p->corosync_given = true; /* fabricd needs the nodes: never guess without them */
	if (corosync) {
		p->corosync = corosync;
		return;
	}
	/* the parent of DIR: "/etc/pve/sdn/" -> "/etc/pve", "sdn" -> "." */
	while (n > 1 && sdn_dir[n - 1] == '/')
		n--;
	while (n > 0 && sdn_dir[n - 1] != '/')
		n--;
	while (n > 1 && sdn_dir[n - 1] == '/')
		n--;
	if (n == 0)
		snprintf(buf, len, "corosync.conf");
	else
		snprintf(buf, len, "%.*s/corosync.conf", (int)(n == 1 && sdn_dir[0] == '/' ? 0 : n),
			 sdn_dir);
	p->corosync = buf;
}

/* One section-config file of the SDN directory; a missing file is empty. */
static int read_cfg(const struct pve_paths *p, const char *name, enum pve_dialect dialect,
		    struct pve_file *f, struct diag *d)
{
	char path[PATH_MAX];
	char *text;
	size_t len;
	int ret;

	f->name = name;
	f->dialect = dialect;
	snprintf(path, sizeof(path), "%s/%s", p->sdn_dir, name);
	ret = pve_read_file(path, &text, &len);
	if (ret == -ENOENT)
		return 0;
	if (ret < 0) {
		diag_add(d, path,
			 "cannot read: %s; it is Proxmox's SDN file %s (--sdn-dir names the "
			 "directory that holds it)",
			 strerror(-ret), name);
		return ret;
	}
	ret = pve_file_parse(f, text, len, d);
	free(text);
	pve_file_sort(f);		 /* the same order as .running-config gives */
	return ret == -EINVAL ? 0 : ret; /* a rejected RUST file is an error in d */
}

static int read_pending(const struct pve_paths *p, struct pve_files *x, struct diag *d)
{
	static const char *const names[] = {"zones.cfg", "vnets.cfg", "subnets.cfg",
					    "controllers.cfg", "fabrics.cfg"};
	int ret = 0;

	for (size_t i = 0; i < 5 && ret == 0; i++)
		ret = read_cfg(p, names[i], i == 4 ? PVE_DIALECT_RUST : PVE_DIALECT_PERL,
			       &x->pending[i], d);
	x->in.zones = &x->pending[0];
	x->in.vnets = &x->pending[1];
	x->in.subnets = &x->pending[2];
	x->in.controllers = &x->pending[3];
	x->in.fabrics = &x->pending[4];
	return ret;
}

static int read_running(const struct pve_paths *p, struct pve_files *x, struct diag *d)
{
	char path[PATH_MAX];
	char *text;
	size_t len;
	int ret;

	snprintf(path, sizeof(path), "%s/.running-config", p->sdn_dir);
	ret = pve_read_file(path, &text, &len);
	if (ret < 0) {
		diag_add(d, path,
			 "cannot read: %s; Proxmox writes it on SDN \"Apply\" (import-pve "
			 "--pending reads the pending *.cfg files instead)",
			 strerror(-ret));
		return ret;
	}
	ret = pve_running_parse(text, len, &x->running, d);
	free(text);
	x->in.zones = &x->running.zones;
	x->in.vnets = &x->running.vnets;
	x->in.subnets = &x->running.subnets;
	x->in.controllers = &x->running.controllers;
	x->in.fabrics = &x->running.fabrics;
	return ret;
}

static int read_corosync(const struct pve_paths *p, struct pve_files *x, struct diag *d)
{
	char *text;
	size_t len;
	int ret = pve_read_file(p->corosync, &text, &len);

	x->in.corosync_name = p->corosync;
	if (ret == -ENOENT && !p->corosync_given) {
		diag_warn(d, p->corosync,
			  "not found; nodes come from the WireGuard fabric only (give "
			  "--corosync FILE)");
		return 0;
	}
	if (ret < 0) {
		diag_add(d, p->corosync,
			 "cannot read: %s; give Proxmox's corosync.conf with --corosync FILE",
			 strerror(-ret));
		return ret;
	}
	ret = corosync_parse(text, len, p->corosync, &x->corosync, d);
	free(text);
	if (ret == 0)
		x->in.corosync = &x->corosync;
	return ret;
}

int pve_files_read(const struct pve_paths *p, struct pve_files *x, struct diag *d)
{
	int ret;

	memset(x, 0, sizeof(*x));
	ret = p->pending ? read_pending(p, x, d) : read_running(p, x, d);
	return ret == 0 ? read_corosync(p, x, d) : ret;
}

void pve_files_free(struct pve_files *x)
{
	pve_running_free(&x->running);
	for (size_t i = 0; i < 5; i++)
		pve_file_free(&x->pending[i]);
	corosync_free(&x->corosync);
}

int pve_load_cluster(const struct pve_paths *p, const struct pve_import_opts *opts,
		     struct cluster **out, struct diag *d)
{
	struct pve_import *imp = NULL;
	struct pve_files x;
	char *json = NULL;
	int ret;

	*out = NULL;
	ret = pve_files_read(p, &x, d);
	if (ret == 0)
		ret = pve_import_run(&x.in, opts, &imp, d);
	if (ret == 0 && d->n)
		ret = -EINVAL; /* never a part: what does not map would be torn down */
	if (ret == 0 && !(json = pve_import_json(imp)))
		ret = -ENOMEM;
	if (ret == 0)
		ret = config_load_buffer(json, strlen(json), out, d);
	/* what Proxmox gives each zone's guests, for the node to compare with what it carries */
	for (size_t i = 0; ret == 0 && i < (*out)->n_zones; i++) {
		(*out)->zones[i].pve_mtu = pve_import_guest_mtu(imp, (*out)->zones[i].name);
		(*out)->zones[i].flags |= ZONE_PVE_SDN;
	}
	free(json);
	pve_import_free(imp);
	pve_files_free(&x);
	return ret;
}
