// SPDX-License-Identifier: GPL-2.0-or-later
/* engine/converged.c - vnets the daemon's last pass found converged (converged.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "engine/converged.h"
#include "engine/reconcile.h"
#include "engine/switch.h"

void converged_init(struct converged *c)
{
	memset(c, 0, sizeof(*c));
}

void converged_free(struct converged *c)
{
	free(c->sums);
	free(c->pass_sums);
	converged_init(c);
}

void converged_forget(struct converged *c)
{
	free(c->sums);
	c->sums = NULL;
	c->n = 0;
}

/* A word at a time: a vnet's members are most of what is summed (63 at 64 nodes). */
static uint64_t mix(uint64_t h, uint64_t x)
{
	h = (h ^ x) * 0x9e3779b97f4a7c15ULL;
	return h ^ (h >> 29);
}

/* Field by field: IPv4 leaves bytes[4..15] unspecified. */
static uint64_t sum_addr(uint64_t h, const struct ip_addr *a)
{
	uint64_t w[2] = {0, 0};

	memcpy(w, a->bytes, ip_addr_len(a));
	return mix(mix(mix(h, (uint64_t)a->family), w[0]), w[1]);
}

static uint64_t sum_str(uint64_t h, const char *s)
{
	return fnv1a(h, s ? s : "", s ? strlen(s) + 1 : 1);
}

/* Everything planning v reads from the desired state and the options. */
static uint64_t fingerprint(const struct reconcile *r, const struct desired_vnet *v)
{
	uint64_t h = sum_str(FNV1A_INIT, r->owner);
	uint8_t flags[6] = {v->evpn,	      v->standby,	  v->plain_receiving,
			    v->plain_sending, v->existing_bridge, (uint8_t)v->transport};

	unsigned int grace = switch_grace(r, v);

	h = fnv1a(h, &grace, sizeof(grace));
	h = sum_str(h, v->name);
	h = sum_str(h, v->vxlan);
	h = sum_str(h, v->other_vxlan);
	h = sum_str(h, v->replaces);
	h = fnv1a(h, &v->vni, sizeof(v->vni));
	h = fnv1a(h, &v->port, sizeof(v->port));
	h = fnv1a(h, &v->other_port, sizeof(v->other_port));
	h = fnv1a(h, &v->mtu, sizeof(v->mtu));
	h = fnv1a(h, flags, sizeof(flags));
	h = sum_addr(h, &v->local);
	h = sum_addr(h, &v->other_local);
	h = fnv1a(h, &v->n_remotes, sizeof(v->n_remotes));
	for (size_t i = 0; i < v->n_remotes; i++)
		h = sum_addr(h, &v->remotes[i]);
	h = fnv1a(h, &v->n_other_remotes, sizeof(v->n_other_remotes));
	for (size_t i = 0; i < v->n_other_remotes; i++)
		h = sum_addr(h, &v->other_remotes[i]);
	return h;
}

/* v's fingerprint, computed once a pass where v is of the pass's desired state. */
static uint64_t pass_fingerprint(const struct converged *c, const struct reconcile *r,
				 const struct desired_vnet *v)
{
	size_t at;

	if (!c->pass_sums || v < c->pass_vnets || v >= c->pass_vnets + c->pass_n)
		return fingerprint(r, v);
	at = (size_t)(v - c->pass_vnets);
	if (!c->pass_sums[at])
		c->pass_sums[at] = fingerprint(r, v);
	return c->pass_sums[at];
}

void converged_note_want(struct converged *c, const struct node_state *want)
{
	free(c->pass_sums);
	c->pass_vnets = want->vnets;
	c->pass_n = want->n_vnets;
	c->pass_sums = want->n_vnets ? calloc(want->n_vnets, sizeof(*c->pass_sums)) : NULL;
}

static int by_sum(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

int converged_record(struct converged *c, const struct reconcile *r, const struct node_state *want)
{
	uint64_t *sums = malloc((want->n_vnets + 1) * sizeof(*sums));
	size_t n = 0;

	converged_forget(c);
	if (!sums)
		return -ENOMEM;
	for (size_t i = 0; i < want->n_vnets; i++) {
		/* a held vnet was left as it is, not planned: planned again each pass */
		if (!r->held || !r->held[i])
			sums[n++] = pass_fingerprint(c, r, &want->vnets[i]);
	}
	qsort(sums, n, sizeof(*sums), by_sum);
	c->sums = sums;
	c->n = n;
	return 0;
}

void converged_note_changes(struct converged *c, const struct obs_view *v)
{
	c->view = v;
	/* a new pass: the last one's sums are of a desired state that is gone */
	free(c->pass_sums);
	c->pass_sums = NULL;
	c->pass_n = 0;
}

static bool recorded(const struct converged *c, uint64_t sum)
{
	size_t at = u64_lower_bound(c->sums, c->n, sum);

	return at < c->n && c->sums[at] == sum;
}

static bool changed(const struct converged *c, int ifindex)
{
	for (size_t i = 0; i < c->view->n_pass_changed; i++) {
		if (c->view->pass_changed[i] == ifindex)
			return true;
	}
	return false;
}

/* The vnet's link name exists, is fabricd's, carries no stage note and was not read again. */
static bool link_quiet(const struct converged *c, const struct reconcile *r,
		       const struct observed *have, const char *name)
{
	const struct link_obs *l = link_find(&have->links, name);
	struct stage_note note;

	if (!l || !link_is_owned(l, r->owner) || changed(c, l->ifindex))
		return false;
	/* an alias that is the owner alone carries no note (the usual case: nothing to parse) */
	return !link_alias(l)[strlen(r->owner)] ||
	       (!link_stage_note(l, r->owner, LINK_RETIRE_NOTE, &note) &&
		!link_stage_note(l, r->owner, LINK_HOLD_NOTE, &note));
}

/* The checks cost little: at 1024 vnets all of them together take well under a millisecond. */
bool converged_skips(const struct converged *c, const struct reconcile *r,
		     const struct desired_vnet *v, const struct observed *have)
{
	if (!c || !c->n || !c->view || !c->view->changes_known || v->evpn || v->existing_bridge ||
	    v->replaces)
		return false;
	/* a secure vnet's plain device exists only while it retires */
	if (!link_quiet(c, r, have, v->name) || !link_quiet(c, r, have, v->vxlan) ||
	    (v->standby ? !link_quiet(c, r, have, v->other_vxlan)
			: link_find(&have->links, v->other_vxlan) != NULL))
		return false;
	return recorded(c, pass_fingerprint(c, r, v));
}
