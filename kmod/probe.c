// SPDX-License-Identifier: GPL-2.0-or-later
/* probe.c - kernel and host capabilities, and the WireGuard backend choice. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "kmod/probe.h"
#include "wireguard/genl.h"

/* Looks for "/name.ko" (any compression) in a modules.dep or modules.builtin file. */
static bool listed_in(const char *path, const char *name)
{
	char line[1024], needle[96];
	bool found = false;
	FILE *f = fopen(path, "re");

	if (!f)
		return false;
	snprintf(needle, sizeof(needle), "/%s.ko", name);
	while (!found && fgets(line, sizeof(line), f)) {
		char *colon = strchr(line, ':');

		if (colon)
			*colon = '\0';
		line[strcspn(line, "\n")] = '\0';
		found = strstr(line, needle) != NULL;
	}
	fclose(f);
	return found;
}

bool kmod_module_available(const char *name)
{
	char path[512];
	struct utsname u;
	struct stat st;

	snprintf(path, sizeof(path), "/sys/module/%s", name);
	if (stat(path, &st) == 0)
		return true;
	if (uname(&u) < 0)
		return false;
	snprintf(path, sizeof(path), "/lib/modules/%s/modules.builtin", u.release);
	if (listed_in(path, name))
		return true;
	snprintf(path, sizeof(path), "/lib/modules/%s/modules.dep", u.release);
	return listed_in(path, name);
}

bool kmod_in_path(const char *prog)
{
	const char *path = getenv("PATH");
	char buf[512];

	if (!path || !*path)
		path = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
	while (*path) {
		size_t n = strcspn(path, ":");

		snprintf(buf, sizeof(buf), "%.*s/%s", (int)n, path, prog);
		if (access(buf, X_OK) == 0)
			return true;
		path += n;
		if (*path == ':')
			path++;
	}
	return false;
}

/* What an earlier probe of this process found (found once, found for good). */
static struct kmod_caps found;

void kmod_probe(struct kmod_caps *caps)
{
	memset(caps, 0, sizeof(*caps));
	caps->wireguard = wg_genl_available();
	caps->vxlan = found.vxlan || kmod_module_available("vxlan");
	caps->bridge = found.bridge || kmod_module_available("bridge");
	caps->wireguard_go = found.wireguard_go || kmod_in_path("wireguard-go");
	caps->tun = access("/dev/net/tun", R_OK | W_OK) == 0;
	found.vxlan = caps->vxlan;
	found.bridge = caps->bridge;
	found.wireguard_go = caps->wireguard_go;
}

int kmod_choose_backend(enum wg_backend_choice choice, const struct kmod_caps *caps,
			enum wg_backend *out, char *err, size_t errlen)
{
	bool userspace_ok = caps->wireguard_go && caps->tun;

	switch (choice) {
	case WG_CHOICE_KERNEL:
		if (!caps->wireguard) {
			snprintf(err, errlen,
				 "this kernel has no WireGuard: load the wireguard module "
				 "(modprobe wireguard) or use --wg-backend userspace");
			return -ENOTSUP;
		}
		*out = WG_BACKEND_KERNEL;
		return 0;
	case WG_CHOICE_USERSPACE:
		if (!userspace_ok) {
			snprintf(err, errlen, "%s",
				 !caps->wireguard_go
				     ? "wireguard-go is not installed: apt-get install "
				       "wireguard-go, or use --wg-backend kernel"
				     : "/dev/net/tun is missing: load the tun module for "
				       "wireguard-go");
			return -ENOTSUP;
		}
		*out = WG_BACKEND_USERSPACE;
		return 0;
	case WG_CHOICE_AUTO:
	default:
		if (caps->wireguard) {
			*out = WG_BACKEND_KERNEL;
			return 0;
		}
		if (userspace_ok) {
			*out = WG_BACKEND_USERSPACE;
			return 0;
		}
		snprintf(err, errlen,
			 "no WireGuard available: this kernel has no wireguard module and "
			 "wireguard-go is not installed (apt-get install wireguard-go)");
		return -ENOTSUP;
	}
}

const char *kmod_missing_reason(const struct kmod_caps *caps)
{
	if (!caps->vxlan)
		return "this kernel has no VXLAN support: load the vxlan module";
	if (!caps->bridge)
		return "this kernel has no bridge support: load the bridge module";
	return NULL;
}
