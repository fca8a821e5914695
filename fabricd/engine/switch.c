// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * engine/switch.c - a vnet's VXLAN devices, and the stages of a transport
 * switch as ordinary plan ops.
 *
 * Every node can always receive both transports of every vnet it carries, so
 * a node that switches sends only the new transport from that moment on:
 *
 * - A plain vnet has two devices in its bridge: vx<VNI>, which sends (flood
 *   remotes, the bridge floods to it and learns behind it), and a standby
 *   vs<VNI>, mute: it receives and delivers into the bridge, but has no
 *   remotes, is not flooded to and learns nothing, so it never sends. Both
 *   are isolated bridge ports: nothing loops between them.
 * - plain -> secure: vs<VNI> takes the remotes and sends at once; vx<VNI>
 *   turns mute (its learned entries flushed), so nothing of the vnet leaves
 *   the node in clear text. The nodes that have not switched yet receive its
 *   secure frames on their standby and answer plain, as they still send
 *   everything (unknown unicast floods): the guard accepts the members'
 *   plain VXLAN of that VNI until the grace period ends (note
 *   "retire-after=" on vx<VNI>), then vx<VNI> goes.
 * - secure -> plain: the others cannot receive plain until they switch, but
 *   all of them receive secure, so the node keeps sending secure until its
 *   grace period ends (note "secure-until=" on vs<VNI>), with vx<VNI>
 *   listening (learning, so what arrives plain is answered plain); then
 *   vx<VNI> sends and vs<VNI> becomes the mute standby, its learned entries
 *   flushed so the bridge moves every conversation to plain.
 * - Back before the grace period ends: the same rules from the current
 *   state (a mute vx<VNI> listens while vs<VNI> holds; a holding vs<VNI>
 *   simply keeps sending).
 *
 * The standby learns nothing on purpose: if it did, two nodes could keep a
 * conversation on secure after a switch back to plain, each answering along
 * what it learned from the other.
 *
 * A device that takes a smaller role changes after the other one has taken
 * over (kinds/vxlan.c, PHASE_RETIRE), and the guard stops plain VXLAN of a
 * switched VNI from leaving only after that (kinds/guard.c, PHASE_SEAL), so
 * nothing is lost in between.
 *
 * An EVPN vnet has one device, vx<VNI> on port 4789, in both transports:
 * FRR 8.4's zebra aborts or loses the VNI while two VXLAN devices carry it,
 * and flaps it whenever its device is replaced (README "EVPN control plane"
 * lists what was tried). A switch changes the device's local address, its
 * VTEP (the fabric address when secure, the underlay's when plain), on the
 * live device; zebra announces it and the peers follow. Meanwhile VXLAN
 * still goes to VTEPs that are underlay addresses, so a secure vnet's is
 * carried: the guard marks the VNI's VXLAN (set carried_vnis) and a policy
 * rule sends marked packets into WireGuard, to the peer whose allowed IPs
 * hold the destination (kinds/carry.c). What comes through WireGuard
 * arrives on the same device, so every node receives both ways, and the
 * kernel's guard tells whether the VNI is carried now:
 * - plain -> secure: carried at once; the members' clear text is still
 *   taken until the grace period ends (note "clear-until=" on vx<VNI>).
 * - secure -> plain: the others take this VNI only through WireGuard until
 *   they switch, so it stays carried until the grace period ends (note
 *   "carry-until="), and clear text is taken meanwhile.
 *
 * Steps not yet due go to plan.later with their due time: `plan` lists them,
 * the daemon wakes for them, and any pass after that time (a one-shot apply
 * as well as the daemon's) plans and performs them.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "engine/frr.h"
#include "engine/reconcile.h"
#include "engine/switch.h"
#include "kinds/fdb.h"
#include "kinds/guard.h"
#include "kinds/kind.h"
#include "kinds/vxlan.h"

enum stage {
	STAGE_STEADY,	/* one device sends; a plain vnet's standby is mute */
	STAGE_RETIRING, /* secure vnet: its old plain device is mute until due */
	STAGE_HOLDING,	/* plain vnet: its secure device still sends until due */
	STAGE_CLEAR,	/* secure EVPN vnet: its members' clear text is taken until due */
	STAGE_CARRYING, /* plain EVPN vnet: still carried through WireGuard until due */
};

struct vnet_stage {
	enum stage stage;
	const struct link_obs *old; /* the device carrying the stage note */
	long long due;		    /* CLOCK_BOOTTIME s */
	unsigned int grace;
	bool fresh; /* the note is written in this pass */
	bool ended; /* its note's deadline has passed: this pass ends the stage */
};

/*
 * The end of a grace period that starts now, in whole seconds: now is
 * rounded down, so one more second keeps the old device for at least grace
 * seconds (it may go up to a second later, never earlier).
 */
static long long deadline(long long now, unsigned int grace)
{
	return now + grace + 1;
}

/* Whether zone is one of a comma-separated list. */
static bool listed(const char *list, const char *zone)
{
	size_t len = strlen(zone);

	for (const char *p = list; p; p = strchr(p, ',')) {
		p += *p == ',';
		if (!strncmp(p, zone, len) && (p[len] == ',' || !p[len]))
			return true;
	}
	return false;
}

unsigned int switch_grace(const struct reconcile *r, const struct desired_vnet *v)
{
	return v->zone_name && listed(r->end_grace, v->zone_name) ? 0 : r->grace;
}

/*
 * l's deadline for note key in CLOCK_BOOTTIME seconds, and its grace (the
 * note's, else grace); 0 without a note.
 */
static long long note_due(const struct reconcile *r, const struct link_obs *l, const char *key,
			  unsigned int grace_now, unsigned int *grace)
{
	struct stage_note n;
	long long due;

	*grace = grace_now;
	if (!link_stage_note(l, r->owner, key, &n))
		return 0;
	if (n.grace)
		*grace = n.grace;
	if (n.at)
		return n.at;
	/* a note from before at= was recorded: its wall-clock deadline, as of now */
	due = n.after - r->now + r->boot_now;
	return due > 0 ? due : 1;
}

bool switch_port_of_vnet(const struct desired_vnet *v, const struct link_obs *l,
			 const struct observed *have)
{
	const struct link_obs *bridge = link_find(&have->links, v->name);

	return bridge && l->master == bridge->ifindex;
}

/*
 * The vnet's device of the other transport, when fabricd made it and it is
 * a port of this vnet's bridge (another vnet's device that had this VNI has
 * no switch to stage: a new secure vnet must not take clear text through it
 * for a grace period).
 */
static const struct link_obs *other_device(const struct reconcile *r, const struct desired_vnet *v,
					   const struct observed *have)
{
	const struct link_obs *l = link_find(&have->links, v->other_vxlan);

	if (!l || !link_is_owned(l, r->owner) || strcmp(l->kind, "vxlan") || l->vni != v->vni ||
	    l->port != v->other_port || !switch_port_of_vnet(v, l, have))
		return NULL;
	/*
	 * A secure EVPN vnet's device has its name and port, but its VTEP is the
	 * fabric address: its frames went through WireGuard. A zone leaving EVPN
	 * secure has no clear text to take for a grace period: it is replaced.
	 */
	if (v->transport == TRANSPORT_SECURE && ip_addr_equal(&l->local, &v->local))
		return NULL;
	return l;
}

static void stage_of(const struct reconcile *r, const struct desired_vnet *v,
		     const struct observed *have, struct vnet_stage *st)
{
	const struct link_obs *old = other_device(r, v, have);
	bool secure = v->transport == TRANSPORT_SECURE;
	unsigned int grace = switch_grace(r, v);
	long long due;

	memset(st, 0, sizeof(*st));
	if (!old || !grace || v->one_device)
		return;
	due = note_due(r, old, secure ? LINK_RETIRE_NOTE : LINK_HOLD_NOTE, grace, &st->grace);
	/* fabricd before 2026-12-02 noted a secure device's hold as retire-after= too */
	if (!due && !secure)
		due = note_due(r, old, LINK_RETIRE_NOTE, grace, &st->grace);
	if (due && r->boot_now >= due) {
		st->ended = true; /* its stage is over */
		return;
	}
	/*
	 * No note: a secure vnet's plain device sent until now. A plain vnet's
	 * secure device did only if it has flood remotes: a standby that a killed
	 * run left with the new port's default flags never sent anything.
	 */
	if (!due && !secure && !fdb_has_device(&have->fdb, old->ifindex))
		return;
	st->stage = secure ? STAGE_RETIRING : STAGE_HOLDING;
	st->old = old;
	st->fresh = !due;
	st->due = due ? due : deadline(r->boot_now, grace);
}

/* An EVPN vnet's stage: from its device's note and whether the kernel's guard carries it. */
static void evpn_stage_of(const struct reconcile *r, const struct desired_vnet *v,
			  const struct observed *have, struct vnet_stage *st)
{
	const struct link_obs *l = link_find(&have->links, v->vxlan);
	bool secure = v->transport == TRANSPORT_SECURE;
	unsigned int grace = switch_grace(r, v);
	long long due;

	memset(st, 0, sizeof(*st));
	if (!l || !link_is_owned(l, r->owner) || strcmp(l->kind, "vxlan") || l->vni != v->vni ||
	    l->port != v->port || !grace)
		return; /* a new device has sent nothing yet */
	due = note_due(r, l, secure ? LINK_CLEAR_NOTE : LINK_CARRY_NOTE, grace, &st->grace);
	if (due && r->boot_now >= due) {
		st->ended = true; /* its stage is over */
		return;
	}
	if (!due && firewall_obs_carries(have->firewall, v->vni) == secure)
		return; /* in its transport already */
	st->stage = secure ? STAGE_CLEAR : STAGE_CARRYING;
	st->old = l;
	st->fresh = !due;
	st->due = due ? due : deadline(r->boot_now, grace);
}

/* True when l could still send: an open bridge port or flood remotes. */
static bool may_send(const struct link_obs *l, const struct fdb_table *fdb)
{
	return fdb_has_device(fdb, l->ifindex) || vxlan_port_may_send(l);
}

/*
 * Secure still sends v's frames until its grace period ends: v, and its
 * zone for the daemon's MTU report, keep the secure MTU until then. Under
 * mtu_policy max the plain MTU is larger, and a guest told to raise its MTU
 * at the switch would have its frames refused (DF) while they still go
 * through WireGuard.
 */
static void hold_secure_mtu(struct node_state *want, struct desired_vnet *v)
{
	for (size_t i = 0; i < want->n_zones; i++) {
		struct desired_zone *dz = &want->zones[i];

		if (dz->zone != v->zone || !dz->secure_mtu || dz->secure_mtu >= v->mtu)
			continue;
		v->mtu_after_hold = v->mtu;
		v->mtu = dz->secure_mtu;
		if (dz->mtu > dz->secure_mtu)
			dz->mtu = dz->secure_mtu;
		return;
	}
}

void switch_mark_stages(const struct reconcile *r, struct node_state *want,
			const struct observed *have)
{
	for (size_t i = 0; i < want->n_vnets; i++) {
		struct desired_vnet *v = &want->vnets[i];
		const struct link_obs *old;
		struct vnet_stage st;

		v->plain_receiving = v->plain_sending = v->carried = v->secure_holding = false;
		v->mtu_after_hold = 0;
		if (v->evpn) {
			evpn_stage_of(r, v, have, &st);
			v->carried = v->transport == TRANSPORT_SECURE || st.stage == STAGE_CARRYING;
			v->plain_receiving = st.stage == STAGE_CLEAR;
			if (st.stage == STAGE_CARRYING)
				hold_secure_mtu(want, v);
			continue;
		}
		if (v->transport != TRANSPORT_SECURE) {
			stage_of(r, v, have, &st);
			v->secure_holding = st.stage == STAGE_HOLDING;
			if (st.stage == STAGE_HOLDING)
				hold_secure_mtu(want, v);
			continue;
		}
		old = other_device(r, v, have);
		if (!old)
			continue;
		stage_of(r, v, have, &st);
		v->plain_receiving = st.stage == STAGE_RETIRING;
		/*
		 * Sending before the switch's first pass mutes it. Once the kernel's
		 * guard seals the VNI the node has switched: a device sending again
		 * (by hand) is muted under the seal, never unsealed first.
		 */
		v->plain_sending =
		    may_send(old, &have->fdb) && !firewall_obs_seals(have->firewall, v->vni);
	}
}

bool switch_wants_device(const struct reconcile *r, const struct desired_vnet *v,
			 const struct link_obs *l, const struct observed *have)
{
	struct vnet_stage st;

	if (!strcmp(l->name, v->vxlan))
		return true;
	if (strcmp(l->name, v->other_vxlan) || v->evpn || v->one_device)
		return false;
	if (v->standby)
		return true;
	/* a secure vnet keeps the plain device it left until its grace period ends */
	stage_of(r, v, have, &st);
	return st.stage == STAGE_RETIRING && st.old == l;
}

static void port_init(struct vxlan_port *d, const struct reconcile *r, const struct desired_vnet *v,
		      bool own_transport, enum vxlan_role role)
{
	memset(d, 0, sizeof(*d));
	snprintf(d->name, sizeof(d->name), "%s", own_transport ? v->vxlan : v->other_vxlan);
	d->bridge = v->name;
	d->vni = v->vni;
	d->port = own_transport ? v->port : v->other_port;
	d->local = own_transport ? v->local : v->other_local;
	d->mtu = v->mtu;
	d->evpn = v->evpn;
	d->role = role;
	if (role == VXLAN_SENDS) {
		d->n_remotes = own_transport ? v->n_remotes : v->n_other_remotes;
		d->remotes = own_transport ? v->remotes : v->other_remotes;
	}
	if (v->evpn && own_transport) {
		d->n_also = v->n_other_remotes;
		d->also = v->other_remotes;
	}
	snprintf(d->alias, sizeof(d->alias), "%s", r->owner);
}

/* The longest note fits the alias a link change carries (kinds/link.h), with 19-digit times. */
_Static_assert(sizeof(OWNER_PREFIX) - 1 + FABRICD_NAME_MAX + sizeof(" " LINK_RETIRE_NOTE) - 1 + 19 +
		       sizeof(" grace=86400 at=") - 1 + 19 <
		   LINK_ALIAS_MAX,
	       "a stage note must fit LINK_ALIAS_MAX");

/* The stage note on the device that carries it: kept as it is, or written now. */
static void port_note(struct vxlan_port *d, const struct reconcile *r, const struct vnet_stage *st,
		      const char *key)
{
	if (!st->fresh) {
		snprintf(d->alias, sizeof(d->alias), "%s", link_alias(st->old));
		return;
	}
	/* a fresh note's grace is this pass's for the vnet (note_due) */
	snprintf(d->alias, sizeof(d->alias), "%s %s%lld grace=%u at=%lld", r->owner, key,
		 deadline(r->now, st->grace), st->grace, deadline(r->boot_now, st->grace));
}

static int plan_port(const struct reconcile *r, const struct vxlan_port *d,
		     const struct link_obs *bridge, const struct observed *have, struct plan *p)
{
	const struct link_obs *l = link_find(&have->links, d->name);
	bool made = false;
	struct kind_input in = {.r = r, .have = have, .port = d, .bridge = bridge, .made = &made};
	int ret;

	if (l && !link_is_owned(l, r->owner))
		l = NULL; /* a conflict: plan_build stops before this */
	in.link = l;
	ret = vxlan_kind.plan(&in, p);
	in.recreated = made;
	return ret < 0 ? ret : fdb_kind.plan(&in, p);
}

/* What the stage does when it ends, for `plan` and the daemon's next wake-up. */
static int plan_stage_end(const struct reconcile *r, const struct desired_vnet *v,
			  const struct vnet_stage *st, struct plan *p)
{
	long long in = st->due - r->boot_now;
	struct op *op;

	if (st->stage == STAGE_RETIRING) {
		op = plan_add_later(p, st->due, in, KIND_LINK, OP_LINK_DELETE, VERB_DELETE, NULL);
		if (!op)
			return -ENOMEM;
		op_delete_names(op, "vxlan", v->other_vxlan);
		/* the guard's change that comes with it is planned only when due: said here */
		op_detail(op,
			  "vnet %s moved to secure transport, grace period over; the guard then "
			  "drops its members' plain VXLAN of VNI %u",
			  v->name, v->vni);
		return 0;
	}
	op = plan_add_later(p, st->due, in, KIND_VXLAN, OP_LINK_CHANGE, VERB_CHANGE, v->vxlan);
	if (!op)
		return -ENOMEM;
	op_detail(op,
		  "sends: takes the flood remotes (vnet %s moved to plain transport, grace "
		  "period over)",
		  v->name);
	op =
	    plan_add_later(p, st->due, in, KIND_VXLAN, OP_LINK_CHANGE, VERB_CHANGE, v->other_vxlan);
	if (!op)
		return -ENOMEM;
	op_detail(op, "mute standby again: its remotes and learned entries go");
	if (!v->mtu_after_hold)
		return 0;
	op = plan_add_later(p, st->due, in, KIND_BRIDGE, OP_LINK_CHANGE, VERB_CHANGE, v->name);
	if (!op)
		return -ENOMEM;
	op_detail(op, "mtu %u -> %u with its VXLAN devices (mtu_policy max: the plain MTU)", v->mtu,
		  v->mtu_after_hold);
	return 0;
}

/* Whether d's device has a stale flood entry (kinds/fdb.c; held: zebra's answer counts). */
static bool has_stray(const struct observed *have, int ifindex, const struct vxlan_port *d,
		      bool held)
{
	struct fdb_cursor c;
	struct ip_addr dst;

	fdb_cursor_start(&have->fdb, ifindex, &c);
	while (fdb_next(&have->fdb, &c, &dst))
		if (fdb_evpn_stray(d, &dst, held))
			return true;
	return false;
}

/*
 * "Zebra holds it" (which keeps an entry) may come from a read of up to 10 s
 * ago; "it does not" (which removes one) only from a read after the kernel's
 * state was: zebra adds a VTEP to its table before the kernel's, so an entry
 * it installed since an older read must not go for that read.
 */
#define ZEBRA_HELD_MS 10000

/*
 * The VTEPs zebra holds for d's VNI into d (*zebra: to free), when its device
 * has a flood entry to no member (kinds/fdb.c removes the stale ones): asked
 * of vtysh only then. Unknown when zebra runs and does not say: all kept.
 */
static void evpn_zebra_vteps(const struct reconcile *r, const struct observed *have,
			     struct vxlan_port *d, struct ip_addr **zebra)
{
	const struct link_obs *l = link_find(&have->links, d->name);
	int ret;

	*zebra = NULL;
	if (!l || !has_stray(have, l->ifindex, d, false))
		return;
	ret = frr_zebra_vteps(r->frr_pathspace, d->vni, clock_mono_ms() - ZEBRA_HELD_MS, zebra,
			      &d->n_zebra);
	d->zebra = *zebra;
	if (ret == 0 && has_stray(have, l->ifindex, d, true)) {
		free(*zebra);
		ret = frr_zebra_vteps(r->frr_pathspace, d->vni, r->observed_ms, zebra, &d->n_zebra);
		d->zebra = *zebra;
	}
	if (ret < 0)
		d->zebra_unknown = true;
}

/* Whether d's device has a stale MAC entry of zebra's (kinds/fdb.c; held: zebra's answer counts).
 */
static bool has_stray_mac(const struct observed *have, int ifindex, const struct vxlan_port *d,
			  bool held)
{
	const struct fdb_mac *m;
	size_t n = fdb_macs_of(&have->fdb, ifindex, &m);

	for (size_t i = 0; i < n; i++)
		if (fdb_evpn_stray_mac(d, &m[i], held))
			return true;
	return false;
}

/*
 * The MACs zebra holds for d's VNI into d (*macs: to free), when its device
 * has a MAC entry of zebra's to no member, as evpn_zebra_vteps: asked of
 * vtysh only then, "held" from a read of up to 10 s ago, "not held" only
 * from one after the kernel's state was (zebra holds a MAC before the kernel
 * has its entry).
 */
static void evpn_zebra_macs(const struct reconcile *r, const struct observed *have,
			    struct vxlan_port *d, uint8_t (**macs)[6])
{
	const struct link_obs *l = link_find(&have->links, d->name);
	int ret;

	*macs = NULL;
	if (!l || !has_stray_mac(have, l->ifindex, d, false))
		return;
	ret = frr_zebra_macs(r->frr_pathspace, d->vni, clock_mono_ms() - ZEBRA_HELD_MS, macs,
			     &d->n_zebra_macs);
	d->zebra_macs = (const uint8_t(*)[6]) * macs;
	if (ret == 0 && has_stray_mac(have, l->ifindex, d, true)) {
		free(*macs);
		ret = frr_zebra_macs(r->frr_pathspace, d->vni, r->observed_ms, macs,
				     &d->n_zebra_macs);
		d->zebra_macs = (const uint8_t(*)[6]) * macs;
	}
	if (ret < 0)
		d->zebra_macs_unknown = true;
}

/* An EVPN vnet's one device: a switch changes its VTEP (kinds/vxlan.c) and its note. */
static int evpn_plan_vnet(const struct reconcile *r, const struct desired_vnet *v,
			  const struct link_obs *bridge, const struct observed *have,
			  struct plan *p)
{
	bool clear;
	struct vxlan_port d;
	struct vnet_stage st;
	struct ip_addr *zebra;
	uint8_t(*macs)[6];
	struct op *op;
	int ret;

	evpn_stage_of(r, v, have, &st);
	clear = st.stage == STAGE_CLEAR;
	port_init(&d, r, v, true, VXLAN_SENDS);
	if (st.stage != STAGE_STEADY)
		port_note(&d, r, &st, clear ? LINK_CLEAR_NOTE : LINK_CARRY_NOTE);
	evpn_zebra_vteps(r, have, &d, &zebra);
	evpn_zebra_macs(r, have, &d, &macs);
	ret = plan_port(r, &d, bridge, have, p);
	free(zebra);
	free(macs);
	if (ret < 0 || st.stage == STAGE_STEADY)
		return ret;
	op = plan_add_later(p, st.due, st.due - r->boot_now, KIND_VXLAN, OP_LINK_CHANGE,
			    VERB_CHANGE, v->vxlan);
	if (!op)
		return -ENOMEM;
	op_detail(op,
		  clear ? "vnet %s moved to secure transport, grace period over: its members' "
			  "clear text no longer taken"
			: "vnet %s moved to plain transport, grace period over: no longer carried "
			  "through WireGuard",
		  v->name);
	return 0;
}

bool switch_stage_ends(const struct reconcile *r, const struct desired_vnet *v,
		       const struct observed *have)
{
	struct vnet_stage st;

	if (v->evpn)
		evpn_stage_of(r, v, have, &st);
	else
		stage_of(r, v, have, &st);
	return st.ended;
}

int switch_plan_vnet(const struct reconcile *r, const struct desired_vnet *v,
		     const struct link_obs *bridge, const struct observed *have, struct plan *p)
{
	struct vxlan_port first, second;
	struct vnet_stage st;
	bool two;
	int ret;

	if (v->evpn)
		return evpn_plan_vnet(r, v, bridge, have, p);
	stage_of(r, v, have, &st);
	two = v->standby || st.stage != STAGE_STEADY;
	if (st.stage == STAGE_HOLDING) {
		/* back to plain: secure still sends (everyone receives it) until due */
		port_init(&first, r, v, false, VXLAN_SENDS);
		port_note(&first, r, &st, LINK_HOLD_NOTE);
		port_init(&second, r, v, true, VXLAN_LISTENS);
	} else {
		port_init(&first, r, v, true, VXLAN_SENDS);
		port_init(&second, r, v, false, VXLAN_MUTE);
		/* a steady standby made on a running node: after the sender's flood entries */
		second.late = st.stage == STAGE_STEADY && link_find(&have->links, FABRIC_IFNAME);
		if (st.stage == STAGE_RETIRING)
			port_note(&second, r, &st, LINK_RETIRE_NOTE);
	}
	/* the sender first: within a phase its remotes come before the other loses them */
	ret = plan_port(r, &first, bridge, have, p);
	if (!ret && two)
		ret = plan_port(r, &second, bridge, have, p);
	if (!ret && st.stage != STAGE_STEADY)
		ret = plan_stage_end(r, v, &st, p);
	return ret;
}
