// SPDX-License-Identifier: GPL-2.0-or-later
/* engine/ifupdown.c - the ifupdown2 stanzas that keep fabricd's ports (see ifupdown.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/log.h"
#include "base/util.h"
#include "engine/ifupdown.h"

#define HEADER "# Written by fabricd: do not edit (see fabricd's README, Proxmox VE).\n"

char *ifupdown_render(const struct node_state *s)
{
	size_t cap = 1, used = 0;
	char *out;

	for (size_t i = 0; i < s->n_vnets; i++)
		cap += 64 + strlen(s->vnets[i].name) + sizeof(IFUPDOWN_CONDONE);
	cap += sizeof(HEADER) + 160;
	out = malloc(cap);
	if (!out)
		return NULL;
	out[0] = '\0';
	for (size_t i = 0; i < s->n_vnets; i++) {
		const struct desired_vnet *v = &s->vnets[i];
		bool seen = false;

		/* a plain and a secure vnet never share a bridge name, but stay safe */
		for (size_t j = 0; j < i; j++)
			seen = seen ||
			       (s->vnets[j].existing_bridge && !strcmp(s->vnets[j].name, v->name));
		if (!v->existing_bridge || seen)
			continue;
		if (!used)
			used +=
			    (size_t)snprintf(out, cap,
					     HEADER "# ifreload keeps fabricd's VXLAN ports in "
						    "these bridges; the bridges stay Proxmox's.\n");
		used += (size_t)snprintf(out + used, cap - used,
					 "\niface %s\n\tbridge-ports-condone-regex %s\n", v->name,
					 IFUPDOWN_CONDONE);
	}
	return out;
}

static int read_small(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	return (int)n;
}

int ifupdown_sync(const struct node_state *s, const char *path)
{
	char dir[PATH_MAX], *slash, *want;
	static char have[65536];
	struct stat st;
	int ret = 0, n;

	if (!path) {
		path = IFUPDOWN_DEFAULT_FILE;
		snprintf(dir, sizeof(dir), "%s", path);
		slash = strrchr(dir, '/');
		*slash = '\0';
		/* classic ifupdown would not parse "iface X" without a method: ifupdown2 only */
		if (stat(dir, &st) < 0 || !S_ISDIR(st.st_mode) || access(IFUPDOWN2_DIR, F_OK) < 0)
			return 0;
	}
	want = ifupdown_render(s);
	if (!want)
		return -ENOMEM;
	n = read_small(path, have, sizeof(have));
	if (n >= 0 && !strcmp(have, want)) {
		free(want);
		return 0;
	}
	if (!*want) {
		/* nothing to keep: remove the file, but only one fabricd wrote (gone since: so be
		 * it) */
		if (n >= 0 && !strncmp(have, HEADER, strlen(HEADER)) && unlink(path) < 0 &&
		    errno != ENOENT)
			ret = -errno;
	} else if (n >= 0 && strncmp(have, HEADER, strlen(HEADER))) {
		log_error("%s exists and was not written by fabricd: move it away (ifreload would "
			  "remove fabricd's VXLAN ports from Proxmox's bridges)",
			  path);
		ret = -EEXIST;
	} else {
		ret = write_file_atomic(path, want, strlen(want), 0644, false);
		if (ret == 0)
			log_info("%s: ifupdown2 now keeps fabricd's ports in %s bridges", path,
				 "existing");
	}
	if (ret < 0 && ret != -EEXIST && !*want)
		log_error("%s: cannot remove it: %s; remove it by hand (it names ports fabricd no "
			  "longer has)",
			  path, strerror(-ret));
	else if (ret < 0 && ret != -EEXIST)
		log_error(
		    "%s: %s; ifreload may remove fabricd's VXLAN ports from Proxmox's bridges",
		    path, strerror(-ret));
	free(want);
	return ret;
}
