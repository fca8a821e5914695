/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * probe.h - what this kernel and host can do for fabricd (WireGuard, VXLAN,
 * bridge, wireguard-go), and the choice of WireGuard backend.
 */
#ifndef FABRICD_KMOD_PROBE_H
#define FABRICD_KMOD_PROBE_H

#include <stdbool.h>
#include <stddef.h>

/* Which WireGuard implementation carries the fabric device. */
enum wg_backend {
	WG_BACKEND_KERNEL,
	WG_BACKEND_USERSPACE,
};

/* What the operator asked for with --wg-backend. */
enum wg_backend_choice {
	WG_CHOICE_AUTO,
	WG_CHOICE_KERNEL,
	WG_CHOICE_USERSPACE,
};

struct kmod_caps {
	bool wireguard; /* the generic netlink family answers (loads the module) */
	bool vxlan;	/* built in, loaded, or loadable */
	bool bridge;
	bool wireguard_go; /* the userspace implementation is installed */
	bool tun;	   /* /dev/net/tun exists, which wireguard-go needs */
};

/* Whether module name is built in, loaded or loadable for the running kernel. */
bool kmod_module_available(const char *name);

/*
 * What this host has. What was found stays found for the process (the
 * daemon's passes do not search modules.dep and PATH again); what was
 * missing is looked for again, so a module loaded or a package installed
 * later counts. The WireGuard family is asked of the kept generic netlink
 * socket (wireguard/genl.h), which answers at once once resolved.
 */
void kmod_probe(struct kmod_caps *caps);

/* Whether prog is an executable in $PATH (or the usual directories without one). */
bool kmod_in_path(const char *prog);

/*
 * auto: the kernel when it has WireGuard, else wireguard-go; kernel and
 * userspace: that one, if usable. -ENOTSUP with a message in err otherwise.
 */
int kmod_choose_backend(enum wg_backend_choice choice, const struct kmod_caps *caps,
			enum wg_backend *out, char *err, size_t errlen);

/* A one-line reason when VXLAN or bridges are missing; NULL when both are there. */
const char *kmod_missing_reason(const struct kmod_caps *caps);

#endif
