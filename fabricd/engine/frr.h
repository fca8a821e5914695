/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * engine/frr.h - talking to FRR for the EVPN control plane: read and write
 * frr.conf, apply it with frr-reload.py (a diff, never a restart of zebra
 * alone), and read state with vtysh's JSON show commands. fabricd never
 * starts or stops FRR's daemons.
 *
 * pathspace NULL: the host's FRR (/etc/frr/frr.conf, /var/run/frr/);
 * "NAME": daemons started with -N NAME (/etc/frr/NAME/frr.conf,
 * /var/run/frr/NAME/), as `vtysh -N NAME` reaches them.
 */
#ifndef FABRICD_ENGINE_FRR_H
#define FABRICD_ENGINE_FRR_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

struct frr_obs {
	char *conf;	       /* frr.conf as read; "" when absent */
	char *block;	       /* fabricd's marked block in it, or NULL */
	char path[PATH_MAX];   /* frr.conf's */
	int read_error;	       /* errno when frr.conf could not be read (then conf is "") */
	char not_running[512]; /* why zebra or bgpd does not run; "" when both do */
	/*
	 * A fabricd that wrote frr.conf died before frr-reload.py finished: the
	 * file may say what FRR never loaded (the reload is to be done again).
	 */
	bool reload_cut_short;
	/*
	 * A line of fabricd's block that FRR's running configuration lacks
	 * (a vtysh change by hand, a daemon restarted without its config): ""
	 * when it has them all, or when it was not read (FRR down, no block).
	 */
	char running_lacks[160];
};

/* A pathspace name is a path component: letters, digits, "-", "_", ".". 0 or -1 (logged). */
int frr_pathspace_check(const char *name);

/* The frr.conf of a pathspace (buf of PATH_MAX). */
void frr_conf_path(const char *pathspace, char *buf, size_t len);

/* Reads frr.conf and fabricd's block in it. 0 or -errno (a missing file is no error). */
int frr_observe(const char *pathspace, const char *owner, struct frr_obs *o);
void frr_obs_free(struct frr_obs *o);

/*
 * Whether a pass took the last check of FRR's running configuration (kept
 * for a second: the daemon's passes come in bursts) without reading it, or a
 * reload is to be seen running, and it is due again: the daemon plans again
 * then, so that a change by hand is found within about a second.
 */
bool frr_running_recheck_due(void);

/* Whether zebra and bgpd run in the pathspace (their PID files name live processes). */
bool frr_running(const char *pathspace, char *why, size_t len);

/*
 * Writes frr.conf with owner's block replaced by block (NULL: removed) and
 * applies it with frr-reload.py. 0 or -errno (logged with what to do).
 */
int frr_write_and_reload(const char *pathspace, const char *owner, const char *block);

struct plan;
struct diag;
/*
 * Before apply touches anything: a plan that writes fabricd's part needs FRR
 * running. 0, or -ENOTCONN (logged: what to start, and that nothing was
 * changed), a code of its own so that the caller does not say otherwise.
 */
int frr_check_plan(const char *pathspace, const struct plan *p);

/* The same for plan: a warning, so that plan and status still show everything. */
void frr_warn_plan(const char *pathspace, const struct plan *p, struct diag *diag);

/*
 * The JSON output of `vtysh [-N NAME] -c CMD` into *out (waited for at most
 * 10 s): 0, or -ETIMEDOUT or -EIO with why into why[len] and *out NULL.
 */
int frr_show_json(const char *pathspace, const char *cmd, json_t **out, char *why, size_t len);

struct ip_addr;
/*
 * The remote VTEPs zebra holds for vni into *out (malloc'd, *n of them; none
 * when zebra does not know the VNI or does not run), from a read of every
 * VNI (`show evpn vni detail json`) made at read_since_ms (CLOCK_MONOTONIC)
 * or later. 0, -EIO when
 * zebra runs but did not answer (now or within the last 30 s), or -ENOMEM.
 */
int frr_zebra_vteps(const char *pathspace, uint32_t vni, double read_since_ms, struct ip_addr **out,
		    size_t *n);
/*
 * The MACs zebra holds for vni (`show evpn mac vni all json`, local and
 * remote), as frr_zebra_vteps: one read for every VNI, kept, made at
 * read_since_ms or later. *out malloc'd, *n of them. 0, -EIO or -ENOMEM.
 */
int frr_zebra_macs(const char *pathspace, uint32_t vni, double read_since_ms, uint8_t (**out)[6],
		   size_t *n);

/* A VNI's remote VTEPs in `show evpn vni [detail] json`: a list in every FRR release. */
json_t *frr_vni_remote_vteps(json_t *vni);
/* The address of one item of that list, or NULL. */
const char *frr_vtep_address(json_t *item);

#endif
